/**
 * The worksheet reads of a two-way run, as requests (two-way-rows.ts turns their rows into
 * the comparison's form):
 * - a key scan: every row's id and its key fields only (`fields` names them, no system
 *   fields), so a run finds deletes and matches new records without reading whole rows:
 *   about one request per 1,000 rows, each a fraction of a full page;
 * - the filter of the rows changed since a cursor: `utime between [cursor, open end]`
 *   (updated-since-filter.ts: whole seconds, both ends included, so a row at the cursor's
 *   second is read again, never skipped); rows are still checked against the cursor
 *   client-side, so a platform that ignored the condition costs requests, not work;
 * - the filter of given rows by id (`rowid in [...]`, platform-shapes §8 [C]).
 */
import { iterateRows } from '../../api/rows/iterate-rows.ts';
import type { ListPage } from '../../api/rows/iterate-rows.ts';
import { createRowNormaliser } from '../../api/rows/normalise-row.ts';
import type { Filter, NormalisedRow, WorksheetStructure } from '../../api/types.ts';
import { updatedBetween } from '../sources/updated-since-filter.ts';

/** Row ids per `rowid in` request. */
export const IDS_PER_QUERY = 500;

/** One row of a key scan: its id and its key fields (by id and alias), in the comparison's read form. */
export interface KeyScanRow {
  id: string;
  values: Record<string, unknown>;
}

/** Which rows and fields a list reads. */
export interface RowsQuery {
  /** Every row without one. */
  filter?: Filter | undefined;
  /** Only these fields (ids), without system fields: a key scan. Else every field and the system fields. */
  fields?: readonly string[] | undefined;
}

/** The rows of `query`, normalised (keyed by field id and alias), values as the platform sent them. */
export async function* listRows(
  list: ListPage,
  structure: WorksheetStructure,
  timeZone: string,
  query: RowsQuery,
): AsyncGenerator<NormalisedRow> {
  const normalise = createRowNormaliser({ structure, timeZone });
  for await (const row of iterateRows(list, {
    includeSystemFields: query.fields === undefined,
    ...(query.fields === undefined ? {} : { fields: [...query.fields] }),
    ...(query.filter === undefined ? {} : { filter: query.filter }),
  })) {
    yield normalise(row);
  }
}

/** The platform-side filter of rows updated at or after `sinceMs`'s second; undefined: read every row. */
export function changedSinceFilter(sinceMs: number, timeZone: string): Filter | undefined {
  const condition = updatedBetween({ since: new Date(sinceMs).toISOString() }, timeZone);
  return condition === undefined ? undefined : { type: 'group', logic: 'AND', children: [condition] };
}

/** Filters of `ids`, {@link IDS_PER_QUERY} at a time. */
export function byIdFilters(ids: readonly string[]): Filter[] {
  const out: Filter[] = [];
  for (let i = 0; i < ids.length; i += IDS_PER_QUERY)
    out.push({
      type: 'group',
      logic: 'AND',
      children: [
        { type: 'condition', field: 'rowid', operator: 'in', value: ids.slice(i, i + IDS_PER_QUERY) },
      ],
    });
  return out;
}
