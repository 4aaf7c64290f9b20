/**
 * A worksheet's rows as a two-way job compares them: in a person's form (option texts,
 * member names, as pull jobs read them), except a relation, which is read as the related
 * rows' values of the mapping's `relationKey` (what a table column holds for it), not
 * their row ids nor their titles. Whole reads, reads by filter (changed since a cursor,
 * by id) and key scans all come out in that one form, so a match key of a key scan equals
 * the match key of the same row read whole (side-record.ts).
 *
 * The related rows' keys are asked for the row ids seen, a page of rows at a time
 * (`rowid in [...]`, 500 ids a request, key field only), each id once per run: a run reads
 * only the related rows its rows link to, never the related worksheet whole. A related
 * row's key is read as it is at that run: an edit of it is not an edit of the rows linking
 * to it (they are not read again for it; see docs/two-way.md).
 */
import type { PlatformClient } from '../../api/create-platform-client.ts';
import { fieldTypeName } from '../../api/field-types.ts';
import type { ListPage } from '../../api/rows/iterate-rows.ts';
import type { Filter, NormalisedRow, WorksheetField, WorksheetStructure } from '../../api/types.ts';
import { ConfigError } from '../../ground/errors.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import { createPersonForm, personValue } from '../pull/person-values.ts';
import { byIdFilters, listRows } from './worksheet-scans.ts';
import type { KeyScanRow, RowsQuery } from './worksheet-scans.ts';

/** Rows resolved together: one list page. */
const PAGE = 1000;

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

/** A run's reads of one worksheet in the comparison's form, sharing one cache of related keys. */
export interface TwoWayRows {
  /** The rows of `filter` (every row without one), whole, system fields included. */
  read(filter?: Filter): AsyncGenerator<NormalisedRow>;
  /** Every row's id and `fieldIds`' values (a key scan), a relation among them resolved as by {@link read}. */
  scanKeys(fieldIds: readonly string[]): AsyncGenerator<KeyScanRow>;
  /** Requests made so far: list pages of this worksheet, and lookups of related rows (structures, `rowid in` pages). */
  readonly requests: { lists: number; lookups: number };
}

/** The reads of `structure`'s worksheet for one run; keep it for the run, so each related id is asked once. */
export function createTwoWayRows(
  client: PlatformClient,
  structure: WorksheetStructure,
  relations: readonly RelationKeyField[],
): TwoWayRows {
  const requests = { lists: 0, lookups: 0 };
  const timeZone = client.organisation.timeZone;
  const personForm = createPersonForm(structure);
  const resolve = createRelationResolver(client, requests);
  const list: ListPage = (body) => {
    requests.lists++;
    return client.rows.list(structure.id, body);
  };
  async function* pages(query: RowsQuery): AsyncGenerator<NormalisedRow[]> {
    let page: NormalisedRow[] = [];
    for await (const row of listRows(list, structure, timeZone, query)) {
      page.push(row);
      if (page.length < PAGE) continue;
      yield page;
      page = [];
    }
    if (page.length > 0) yield page;
  }
  const formOf = (row: NormalisedRow, rels: readonly RelationKeyField[], keys: CellKeys) => {
    const values = personForm(row.values);
    for (const r of rels) {
      const text = keys(r, row.values[r.field.id]);
      values[r.field.id] = text;
      if (r.field.alias !== undefined && r.field.alias !== '') values[r.field.alias] = text;
    }
    return values;
  };
  return {
    requests,
    async *read(filter) {
      for await (const page of pages({ filter })) {
        const keys = await resolve(page, relations);
        for (const row of page) yield { ...row, values: formOf(row, relations, keys) };
      }
    },
    async *scanKeys(fieldIds) {
      const rels = relations.filter((r) => fieldIds.includes(r.field.id));
      for await (const page of pages({ fields: fieldIds })) {
        const keys = await resolve(page, rels);
        for (const row of page) yield { id: row.id, values: formOf(row, rels, keys) };
      }
    },
  };
}

/** Every row of the worksheet `structure` describes, in the two-way comparison's read form. */
export function readTwoWayRows(
  client: PlatformClient,
  _worksheet: string,
  structure: WorksheetStructure,
  relations: readonly RelationKeyField[],
): AsyncGenerator<NormalisedRow> {
  return createTwoWayRows(client, structure, relations).read();
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

/** A cell's keys: its related rows' key texts (a related row gone since has none); null for none. */
type CellKeys = (r: RelationKeyField, cell: unknown) => string[] | null;

/**
 * Finds the keys of the rows a page links to through `rels`, asking only for ids not
 * known yet, and answers each cell's keys. Counts its requests in `requests.lookups`.
 */
function createRelationResolver(client: PlatformClient, requests: { lookups: number }) {
  const timeZone = client.organisation.timeZone;
  const structures = new Map<string, Promise<WorksheetStructure>>();
  const structureOf = (worksheetId: string) => {
    let found = structures.get(worksheetId);
    if (found === undefined) {
      requests.lookups++;
      found = client.worksheets.get(worksheetId);
      structures.set(worksheetId, found);
      found.catch(() => structures.delete(worksheetId));
    }
    return found;
  };
  const known = new Map<string, Map<string, string>>();
  const keysOf = (r: RelationKeyField) => {
    const at = `${r.field.dataSource ?? ''}:${r.keyField}`;
    let keys = known.get(at);
    if (keys === undefined) {
      keys = new Map<string, string>();
      known.set(at, keys);
    }
    return keys;
  };
  const cellKeys: CellKeys = (r, cell) => {
    const ids = relatedIds(cell);
    if (r.keyField === 'rowid') return ids.length === 0 ? null : ids;
    const keys = keysOf(r);
    const texts = ids.map((id) => keys.get(id) ?? '').filter((k) => k !== '');
    return texts.length === 0 ? null : texts;
  };
  return async (rows: readonly NormalisedRow[], rels: readonly RelationKeyField[]): Promise<CellKeys> => {
    for (const r of rels) {
      if (r.keyField === 'rowid') continue;
      const worksheetId = r.field.dataSource ?? '';
      const keys = keysOf(r);
      const wanted = [...new Set(rows.flatMap((row) => relatedIds(row.values[r.field.id])))].filter(
        (id) => !keys.has(id),
      );
      if (wanted.length === 0) continue;
      const related = await structureOf(worksheetId);
      const keyField = related.fields.find(
        (f) => f.id === r.keyField || (f.alias !== undefined && f.alias === r.keyField),
      );
      if (keyField === undefined)
        throw new ConfigError(
          `relationKey "${r.keyField}" of field ${r.field.name} is not a field of the related worksheet ${related.name} (${related.id})`,
        );
      const type = fieldTypeName(keyField.type);
      const list: ListPage = (body) => {
        requests.lookups++;
        return client.rows.list(related.id, body);
      };
      for (const filter of byIdFilters(wanted)) {
        for await (const row of listRows(list, related, timeZone, { filter, fields: [keyField.id] })) {
          const text = personValue(type, row.values[keyField.id]);
          keys.set(
            row.id,
            typeof text === 'string' || typeof text === 'number' ? String(text) : textOf(text),
          );
        }
      }
      for (const id of wanted) if (!keys.has(id)) keys.set(id, '');
    }
    return cellKeys;
  };
}

/** A key read in a person's form that is neither text nor a number (a checkbox's boolean). */
function textOf(value: unknown): string {
  return value === null || value === undefined ? '' : JSON.stringify(value);
}
