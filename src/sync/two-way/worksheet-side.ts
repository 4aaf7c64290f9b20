/**
 * The worksheet side of a two-way job: every row read in a person's form (option texts,
 * member names: what a table column holds), and writes through the platform client and
 * its limiter. Values written are mapped by the push mapping's coercers (option text →
 * option, member name → member, dates in the organisation's zone), field by field.
 */
import type { PlatformClient } from '../../api/create-platform-client.ts';
import type { FieldValue, NormalisedRow } from '../../api/types.ts';
import { mapRecord } from '../mapping/map-record.ts';
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

/** The rows of the worksheet and the writes into it. */
export interface WorksheetSide {
  readAll(): AsyncGenerator<NormalisedRow>;
  /** Maps the records; those that cannot be written come back with their reasons. */
  map(writes: readonly WorksheetWrite[]): Promise<{
    ok: Array<{ write: WorksheetWrite; fields: FieldValue[] }>;
    rejected: Array<{ write: WorksheetWrite; errors: RowError[] }>;
  }>;
  create(rows: ReadonlyArray<{ fields: FieldValue[] }>): Promise<string[]>;
  update(rowId: string, fields: FieldValue[]): Promise<void>;
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
      const ids: string[] = [];
      for (let i = 0; i < rows.length; i += BATCH) {
        const part = rows.slice(i, i + BATCH).map((r) => ({ fields: r.fields }));
        const { rowIds } = await client.rows.batchCreate(plan.worksheetId, { rows: part, triggerWorkflow });
        ids.push(...rowIds);
      }
      return ids;
    },
    async update(rowId, fields) {
      await client.rows.update(plan.worksheetId, rowId, { fields, triggerWorkflow });
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
