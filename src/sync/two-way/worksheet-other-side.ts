/**
 * The other side of a two-way job when it is a worksheet (`source: { type: worksheet }`,
 * another app through `credentialsEnvPrefix`): the same {@link TableSide} a table gives,
 * so the plan and the run treat both alike. A record's key is its row id; a "column" is
 * a field of that worksheet (id or alias, as the job's `fields` name it).
 *
 * Read: every row in the comparison's form (two-way-rows.ts), date-times as ISO instants
 * (read in that app's zone) and the row's `_updatedAt` beside them, for `conflict: newest`.
 * Write: each value mapped by the push mapping's coercers against that worksheet (option
 * text → option, member name → member, relation key → row id), through that app's client
 * and limiter; deletes go to its recycle bin. A record this worksheet refuses (a value the
 * mapping cannot write to it, or the platform's refusal of a value: worksheet-side.ts) is
 * answered as refused with its field and reason; the batch's other records are written.
 */
import type { PlatformClient } from '../../api/create-platform-client.ts';
import { fieldTypeName, READ_ONLY_FIELD_TYPES } from '../../api/field-types.ts';
import type { FieldTypeName } from '../../api/field-types.ts';
import type { WorksheetField, WorksheetStructure } from '../../api/types.ts';
import { createZoneClock } from '../../api/zone-clock.ts';
import { ConfigError } from '../../ground/errors.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import { fieldOptions } from '../job-spec/two-way-options.ts';
import type { FieldMapping } from '../model/types.ts';
import { validateMapping } from '../mapping/validate-mapping.ts';
import { createReferenceLookups, createRowReader } from '../prepare/create-reference-lookups.ts';
import type { WorksheetSourceSpec } from '../sources/source-spec.ts';
import type { ColumnInfo, RefusedWrite, TableRecord, TableSide } from './table-side-types.ts';
import { instantOf } from './two-way-fields.ts';
import { mappingRefusal } from './refused-records.ts';
import { readTwoWayRows, relationKeyFields } from './two-way-rows.ts';
import { createWorksheetSide, isRefusal } from './worksheet-side.ts';

/** The column a worksheet side's records carry their `_updatedAt` in (an ISO instant). */
export const WORKSHEET_UPDATED_AT = '_updatedAt';

// Values with no text both sides agree on: refused on this side as on the target's.
const UNSUPPORTED: ReadonlySet<FieldTypeName> = new Set(['Attachment', 'Location', 'Region', 'SubTable']);

/** What opening a worksheet side needs. */
export interface WorksheetOtherSideOptions {
  spec: JobSpec & { source: WorksheetSourceSpec };
  /** The job file, named in every refusal. */
  file: string;
  /** The client of the source's `credentialsEnvPrefix`. */
  client: PlatformClient;
}

/** Reads the worksheet's structure and checks the fields the job maps; refuses what cannot be synced. */
export async function openWorksheetOtherSide(options: WorksheetOtherSideOptions): Promise<TableSide> {
  const { spec, file, client } = options;
  const source = spec.source;
  const structure = await client.worksheets.get(source.worksheet);
  const byRef = fieldsByRef(structure);
  const problems: string[] = [];
  const written: FieldMapping[] = [];
  for (const m of spec.mappings) {
    if (m.from === undefined) continue;
    const at = `fields.${m.target}`;
    const field = byRef.get(m.from);
    if (field === undefined) {
      problems.push(`${at}: source worksheet ${structure.name} has no field ${m.from}`);
      continue;
    }
    const type = fieldTypeName(field.type) ?? 'Text';
    if (UNSUPPORTED.has(type)) {
      problems.push(
        `${at}: ${type} field ${field.name} of source worksheet ${structure.name} is not synced two-way; leave it out of this job`,
      );
      continue;
    }
    if (fieldOptions(spec, m.target).direction === 'to-worksheet' || isReadOnly(field)) continue;
    written.push(sourceMapping(m));
  }
  if (problems.length > 0)
    throw new ConfigError(
      `${file}: these fields cannot be synced two-way:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
  const relations = relationKeyFields(
    structure,
    spec.mappings.flatMap((m) =>
      m.from === undefined ? [] : [{ ref: m.from, relationKey: m.relationKey, at: `fields.${m.target}` }],
    ),
    file,
  );
  const columns = new Map<string, ColumnInfo>();
  for (const [ref, field] of byRef) columns.set(ref, { zoneLess: false, generated: isReadOnly(field) });

  const timeZone = client.organisation.timeZone;
  const triggerWorkflow = spec.target?.triggerWorkflow ?? false;
  const reader = createRowReader(client);
  reader.know(structure, source.worksheet);
  const plan =
    written.length === 0
      ? undefined
      : validateMapping(written, structure, { mode: 'append', jobFile: file, targetTimezone: timeZone });
  const side =
    plan === undefined
      ? undefined
      : createWorksheetSide(
          client,
          structure.id,
          plan,
          createReferenceLookups(client, reader),
          triggerWorkflow,
        );
  const clock = createZoneClock(timeZone);
  const dateTimes = [...byRef].filter(([, f]) => fieldTypeName(f.type) === 'DateTime').map(([ref]) => ref);
  const who = `source worksheet ${structure.name} (${structure.id})`;

  return {
    columns,
    async readAll() {
      const out: TableRecord[] = [];
      for await (const row of readTwoWayRows(client, structure.id, structure, relations)) {
        const values = row.values;
        // Instants, so the comparison needs no zone of this app's.
        for (const ref of dateTimes) {
          const at = instantOf(values[ref], clock);
          if (at !== undefined) values[ref] = new Date(at).toISOString();
        }
        values[WORKSHEET_UPDATED_AT] = row.updatedAt?.toISOString() ?? null;
        out.push({ key: row.id, values });
      }
      return out;
    },
    async write(batch) {
      const created = new Map<string, string>();
      const refused: RefusedWrite[] = [];
      const nothing =
        batch.updates.every((u) => Object.keys(u.set).length === 0) && batch.inserts.length === 0;
      if (nothing && batch.deletes.length === 0) return { created, refused };
      if (side === undefined && !nothing)
        throw new ConfigError(`${file}: no field of the job is written to ${who}`);
      if (side !== undefined && !nothing) {
        const updates = await side.map(
          batch.updates
            .filter((u) => Object.keys(u.set).length > 0)
            .map((u) => ({ ref: u.key, rowId: u.key, record: u.set, targets: Object.keys(u.set) })),
        );
        const inserts = await side.map(batch.inserts.map((i) => ({ ref: i.ref, record: i.values })));
        for (const r of [...updates.rejected, ...inserts.rejected])
          refused.push({ ref: r.write.ref, ...mappingRefusal(r.errors) });
        for (const u of updates.ok) {
          const no = await side.update(u.write.rowId!, u.fields);
          if (no !== undefined) refused.push({ ref: u.write.ref, ...no });
        }
        for (let i = 0; i < inserts.ok.length; i += 100) {
          const part = inserts.ok.slice(i, i + 100);
          const ids = await side.create(part.map((p) => ({ fields: p.fields })));
          part.forEach((p, j) => {
            const id = ids[j]!;
            if (isRefusal(id)) refused.push({ ref: p.write.ref, ...id });
            else created.set(p.write.ref, id);
          });
        }
      }
      for (let i = 0; i < batch.deletes.length; i += 100) {
        await client.rows.batchDelete(structure.id, {
          rowIds: batch.deletes.slice(i, i + 100),
          permanent: false,
          triggerWorkflow,
        });
      }
      return { created, refused };
    },
    close: () => Promise.resolve(),
  };
}

function fieldsByRef(structure: WorksheetStructure): Map<string, WorksheetField> {
  const byRef = new Map<string, WorksheetField>();
  for (const f of structure.fields) {
    byRef.set(f.id, f);
    if (f.alias !== undefined && f.alias !== '' && !byRef.has(f.alias)) byRef.set(f.alias, f);
  }
  return byRef;
}

function isReadOnly(field: WorksheetField): boolean {
  const type = fieldTypeName(field.type);
  return field.isReadOnly === true || (type !== undefined && READ_ONLY_FIELD_TYPES.has(type));
}

/**
 * The mapping that writes a value the plan took from the target worksheet into this one:
 * the field is named as the job names it, and its value is already in the comparison's
 * form, so only the lookups carry over (a relation's key field, members by name).
 */
function sourceMapping(m: FieldMapping): FieldMapping {
  const out: FieldMapping = { target: m.from!, from: m.from! };
  if (m.relationKey !== undefined) out.relationKey = m.relationKey;
  if (m.lookupBy !== undefined) out.lookupBy = m.lookupBy;
  if (m.lookupTable !== undefined) out.lookupTable = m.lookupTable;
  if (m.createOptions !== undefined) out.createOptions = m.createOptions;
  return out;
}
