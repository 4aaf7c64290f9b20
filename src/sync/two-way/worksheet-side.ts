/**
 * The worksheet side of a two-way job: every row read in a person's form (option texts,
 * member names: what a table column holds), and writes through the platform client and
 * its limiter. Values written are mapped by the push mapping's coercers (option text →
 * option, member name → member, dates in the organisation's zone), field by field.
 *
 * A value the platform refuses (a unique value another row holds, a required field left
 * empty, a value of the wrong form: an error of category `invalid-row` or `conflict`)
 * refuses that record only: a batch create the platform refuses is halved until the bad
 * rows stand alone (a batch create is all-or-nothing, platform notes §2 [U], as the
 * one-way writer assumes in write/create-rows.ts), and each refused record comes back
 * with the platform's code and message, the others written.
 */
import type { PlatformClient } from '../../api/create-platform-client.ts';
import type { FieldValue, NormalisedRow } from '../../api/types.ts';
import { mapRecord } from '../mapping/map-record.ts';
import { isCategory } from '../write/batch-outcomes.ts';
import type { RowError } from '../mapping/map-result.ts';
import type { MappingPlan, PlannedField } from '../mapping/plan-types.ts';
import { resolveReferences } from '../mapping/resolve-references.ts';
import type { ReferenceLookups } from '../mapping/resolve-references.ts';
import { createWorksheetReader } from '../pull/read-worksheet-rows.ts';

/** Rows per batch create / delete request. */
const BATCH = 100;

/** What one record should get in the worksheet: the source record, and the targets to write. */
export interface WorksheetWrite {
  /** Caller's reference (the table key). */
  ref: string;
  /** The table's record as read (column → value), overrides applied. */
  record: Record<string, unknown>;
  /** Targets to write; undefined: every field the worksheet is written (a create). */
  targets?: readonly string[];
  rowId?: string;
}

/** Why the platform refused one record's write. */
export interface WriteRefusal {
  /** The field the platform's message names, as the job names it (when it names one written). */
  field?: string;
  /** The platform's error code. */
  errorCode?: number;
  /** The platform's message. */
  reason: string;
}

/** Whether `value` is a {@link WriteRefusal} rather than a new row's id. */
export function isRefusal(value: string | WriteRefusal): value is WriteRefusal {
  return typeof value !== 'string';
}

/** The rows of the worksheet and the writes into it. */
export interface WorksheetSide {
  readAll(): AsyncGenerator<NormalisedRow>;
  /** Maps the records; those that cannot be written come back with their reasons. */
  map(writes: readonly WorksheetWrite[]): Promise<{
    ok: Array<{ write: WorksheetWrite; fields: FieldValue[] }>;
    rejected: Array<{ write: WorksheetWrite; errors: RowError[] }>;
  }>;
  /** Each row's new id, in order, or why the platform refused that row (the others are created). */
  create(rows: ReadonlyArray<{ fields: FieldValue[] }>): Promise<Array<string | WriteRefusal>>;
  /** Undefined once written; why the platform refused it otherwise. */
  update(rowId: string, fields: FieldValue[]): Promise<WriteRefusal | undefined>;
  /** Soft deletes (to the recycle bin). */
  remove(rowIds: readonly string[]): Promise<void>;
}

/** The worksheet of `plan`, written with `lookups` (the run's member and option lookups). */
export function createWorksheetSide(
  client: PlatformClient,
  worksheet: string,
  plan: MappingPlan,
  lookups: ReferenceLookups,
  triggerWorkflow: boolean,
): WorksheetSide {
  const byTarget = new Map(plan.fields.map((f, i) => [f.target, i]));
  const byId = new Map(plan.fields.map((f, i) => [f.id, i]));
  const subPlans = new Map<string, MappingPlan>();

  /** The plan restricted to some fields (no key): mapping only those cannot fail on the others. */
  function planOf(targets: readonly string[] | undefined): MappingPlan {
    if (targets === undefined) return plan;
    const signature = targets.join('\u0000');
    let sub = subPlans.get(signature);
    if (sub === undefined) {
      const fields = targets.map((t) => plan.fields[byTarget.get(t)!] as PlannedField);
      const order = fields.map((_, i) => i).sort((a, b) => (fields[a]!.id < fields[b]!.id ? -1 : 1));
      sub = { ...plan, fields, hashOrder: order, keyIndex: undefined, keyIndexes: [] };
      subPlans.set(signature, sub);
    }
    return sub;
  }

  /** The platform's refusal of a value in `err`, or undefined for any other failure. */
  function refusalOf(err: unknown, written: readonly FieldValue[]): WriteRefusal | undefined {
    if (!isCategory(err, 'invalid-row', 'conflict')) return undefined;
    const field = fieldNamed(err.message, written);
    return {
      reason: err.message,
      ...(err.errorCode === undefined ? {} : { errorCode: err.errorCode }),
      ...(field === undefined ? {} : { field }),
    };
  }

  /** The written field `message` names (its alias, name or id in quotes), as the job names it. */
  function fieldNamed(message: string, written: readonly FieldValue[]): string | undefined {
    const fields = written.flatMap((v) => {
      const at = byId.get(v.id);
      return at === undefined ? [] : [plan.fields[at]!];
    });
    if (fields.length === 1) return fields[0]!.target;
    const named = fields.find((f) =>
      [f.alias, f.name, f.id].some((n) => n !== undefined && n !== '' && message.includes(`"${n}"`)),
    );
    return named?.target;
  }

  /** Creates `rows` in one request; refused, halves them until each bad row stands alone. */
  async function createSome(
    rows: ReadonlyArray<{ fields: FieldValue[] }>,
  ): Promise<Array<string | WriteRefusal>> {
    try {
      const { rowIds } = await client.rows.batchCreate(plan.worksheetId, {
        rows: rows.map((r) => ({ fields: r.fields })),
        triggerWorkflow,
      });
      return rowIds;
    } catch (err) {
      const refused = refusalOf(err, rows.length === 1 ? rows[0]!.fields : []);
      if (refused === undefined) throw err;
      if (rows.length === 1) return [refused];
      const half = Math.ceil(rows.length / 2);
      return [...(await createSome(rows.slice(0, half))), ...(await createSome(rows.slice(half)))];
    }
  }

  return {
    async *readAll() {
      const read = createWorksheetReader(() => client);
      yield* read({ worksheet });
    },
    async map(writes) {
      const ok: Array<{ write: WorksheetWrite; fields: FieldValue[] }> = [];
      const rejected: Array<{ write: WorksheetWrite; errors: RowError[] }> = [];
      const groups = new Map<MappingPlan, WorksheetWrite[]>();
      for (const w of writes) {
        const p = planOf(w.targets?.filter((t) => byTarget.has(t)));
        const group = groups.get(p);
        if (group === undefined) groups.set(p, [w]);
        else group.push(w);
      }
      for (const [p, group] of groups) {
        const mapped = await resolveReferences(
          p,
          group.map((w) => mapRecord(p, w.record)),
          lookups,
        );
        mapped.forEach((result, i) => {
          const write = group[i]!;
          if (result.ok) ok.push({ write, fields: result.fields });
          else rejected.push({ write, errors: result.errors });
        });
      }
      return { ok, rejected };
    },
    async create(rows) {
      const ids: Array<string | WriteRefusal> = [];
      for (let i = 0; i < rows.length; i += BATCH) ids.push(...(await createSome(rows.slice(i, i + BATCH))));
      return ids;
    },
    async update(rowId, fields) {
      try {
        await client.rows.update(plan.worksheetId, rowId, { fields, triggerWorkflow });
        return undefined;
      } catch (err) {
        const refused = refusalOf(err, fields);
        if (refused === undefined) throw err;
        return refused;
      }
    },
    async remove(rowIds) {
      for (let i = 0; i < rowIds.length; i += BATCH) {
        await client.rows.batchDelete(plan.worksheetId, {
          rowIds: rowIds.slice(i, i + BATCH),
          permanent: false,
          triggerWorkflow,
        });
      }
    },
  };
}
