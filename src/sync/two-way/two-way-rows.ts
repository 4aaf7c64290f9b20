/**
 * A worksheet's rows as a two-way job compares them: in a person's form (option texts,
 * member names, as pull jobs read them), except a relation, which is read as the related
 * rows' values of the mapping's `relationKey` (what a table column holds for it), not
 * their row ids nor their titles. The related rows' keys are asked for the row ids seen,
 * a page of rows at a time, each id once per run.
 */
import type { PlatformClient } from '../../api/create-platform-client.ts';
import { fieldTypeName } from '../../api/field-types.ts';
import type { Filter, NormalisedRow, WorksheetField, WorksheetStructure } from '../../api/types.ts';
import { ConfigError } from '../../ground/errors.ts';
import { createRowReader } from '../prepare/create-reference-lookups.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import { createPersonForm, personValue } from '../pull/person-values.ts';
import { createWorksheetReader } from '../pull/read-worksheet-rows.ts';

/** Rows resolved together: one list page, and ids per `rowid in` query. */
const PAGE = 1000;
const IDS_PER_QUERY = 500;

/** A relation field of the worksheet, compared by `keyField` of the rows it links to. */
export interface RelationKeyField {
  field: WorksheetField;
  /** Field (id or alias) of the related worksheet; `rowid` compares the row ids themselves. */
  keyField: string;
}

/**
 * The relation fields a job maps, each with its `relationKey`: `refs` are the worksheet's
 * field names (id or alias) the job maps, each with the relationKey its mapping names.
 * A mapped relation without a relationKey is refused, naming the job file and field.
 */
export function relationKeyFields(
  structure: WorksheetStructure,
  refs: ReadonlyArray<{ ref: string; relationKey: string | undefined; at: string }>,
  file: string,
): RelationKeyField[] {
  const out: RelationKeyField[] = [];
  const problems: string[] = [];
  for (const { ref, relationKey, at } of refs) {
    const field = structure.fields.find((f) => f.id === ref || (f.alias !== undefined && f.alias === ref));
    if (field === undefined || fieldTypeName(field.type) !== 'Relation') continue;
    if (relationKey === undefined || relationKey === '') {
      problems.push(
        `${at}: Relation field ${field.name} of worksheet ${structure.name} needs relationKey: the related worksheet's field the other side holds (or "rowid")`,
      );
      continue;
    }
    if (!out.some((r) => r.field.id === field.id)) out.push({ field, keyField: relationKey });
  }
  if (problems.length > 0)
    throw new ConfigError(
      `${file}: ${problems.length === 1 ? problems[0] : `\n  - ${problems.join('\n  - ')}`}`,
    );
  return out;
}

/** The target worksheet's fields a job maps, with their relationKey, for {@link relationKeyFields}. */
export function relationRefs(
  spec: JobSpec,
): Array<{ ref: string; relationKey: string | undefined; at: string }> {
  return spec.mappings.map((m) => ({ ref: m.target, relationKey: m.relationKey, at: `fields.${m.target}` }));
}

/** Every row of `worksheet`, in the two-way comparison's read form. */
export async function* readTwoWayRows(
  client: PlatformClient,
  worksheet: string,
  structure: WorksheetStructure,
  relations: readonly RelationKeyField[],
): AsyncGenerator<NormalisedRow> {
  const personForm = createPersonForm(structure);
  const resolve = createRelationResolver(client, relations);
  const read = createWorksheetReader(() => client)({ worksheet, values: 'raw' });
  let page: NormalisedRow[] = [];
  const flush = async function* () {
    const keys = await resolve(page);
    for (const row of page) {
      const values = personForm(row.values);
      for (const r of relations) {
        const text = keys(r, row.values[r.field.id]);
        values[r.field.id] = text;
        if (r.field.alias !== undefined && r.field.alias !== '') values[r.field.alias] = text;
      }
      yield { ...row, values };
    }
    page = [];
  };
  for await (const row of read) {
    page.push(row);
    if (page.length >= PAGE) yield* flush();
  }
  yield* flush();
}

/** The related row ids of a relation cell (`[{sid, name}]`, or ids). */
function relatedIds(value: unknown): string[] {
  const items: unknown[] = Array.isArray(value)
    ? value
    : value === null || value === undefined
      ? []
      : [value];
  return items.flatMap((item) => {
    if (typeof item === 'string') return item === '' ? [] : [item];
    const sid = (item as { sid?: unknown } | null)?.sid;
    return typeof sid === 'string' && sid !== '' ? [sid] : [];
  });
}

/**
 * Finds the keys of the rows a page links to, and answers a cell's keys (its related
 * rows' key texts, empty for a related row gone since).
 */
function createRelationResolver(client: PlatformClient, relations: readonly RelationKeyField[]) {
  const reader = createRowReader(client);
  const known = new Map<string, Map<string, string>>();
  return async (rows: readonly NormalisedRow[]) => {
    for (const r of relations) {
      if (r.keyField === 'rowid') continue;
      const worksheetId = r.field.dataSource ?? '';
      let keys = known.get(`${worksheetId}:${r.keyField}`);
      if (keys === undefined) {
        keys = new Map<string, string>();
        known.set(`${worksheetId}:${r.keyField}`, keys);
      }
      const seen = keys;
      const wanted = [...new Set(rows.flatMap((row) => relatedIds(row.values[r.field.id])))].filter(
        (id) => !seen.has(id),
      );
      if (wanted.length === 0) continue;
      const related = await reader.structureOf(worksheetId);
      const keyField = related.fields.find(
        (f) => f.id === r.keyField || (f.alias !== undefined && f.alias === r.keyField),
      );
      if (keyField === undefined)
        throw new ConfigError(
          `relationKey "${r.keyField}" of field ${r.field.name} is not a field of the related worksheet ${related.name} (${related.id})`,
        );
      const type = fieldTypeName(keyField.type);
      for (let i = 0; i < wanted.length; i += IDS_PER_QUERY) {
        const ids = wanted.slice(i, i + IDS_PER_QUERY);
        const filter: Filter = {
          type: 'group',
          logic: 'AND',
          children: [{ type: 'condition', field: 'rowid', operator: 'in', value: ids }],
        };
        for (const row of await reader.list(worksheetId, filter, [keyField.id])) {
          const text = personValue(type, row.values[keyField.id]);
          keys.set(
            row.id,
            typeof text === 'string' || typeof text === 'number' ? String(text) : textOf(text),
          );
        }
        for (const id of ids) if (!keys.has(id)) keys.set(id, '');
      }
    }
    return (r: RelationKeyField, cell: unknown): string[] | null => {
      const ids = relatedIds(cell);
      if (r.keyField === 'rowid') return ids.length === 0 ? null : ids;
      const keys = known.get(`${r.field.dataSource ?? ''}:${r.keyField}`);
      const texts = ids.map((id) => keys?.get(id) ?? '').filter((k) => k !== '');
      return texts.length === 0 ? null : texts;
    };
  };
}

/** A key read in a person's form that is neither text nor a number (a checkbox's boolean). */
function textOf(value: unknown): string {
  return value === null || value === undefined ? '' : JSON.stringify(value);
}
