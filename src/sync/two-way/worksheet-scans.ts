/**
 * The worksheet reads of an incremental two-way run:
 * - a key scan: every row's id and its key fields only (`fields` names them, no system
 *   fields), in a person's form, so a run finds deletes and matches new records without
 *   reading whole rows: about one request per 1,000 rows, each a fraction of a full page;
 * - the filter of the rows changed since a cursor: `utime between [cursor, open end]`
 *   (updated-since-filter.ts: whole seconds, both ends included, so a row at the cursor's
 *   second is read again, never skipped); rows are still checked against the cursor
 *   client-side, so a platform that ignored the condition costs requests, not work;
 * - the filter of given rows by id (`rowid in [...]`, platform-shapes §8 [C]).
 */
import type { PlatformClient } from '../../api/create-platform-client.ts';
import { iterateRows } from '../../api/rows/iterate-rows.ts';
import { createRowNormaliser } from '../../api/rows/normalise-row.ts';
import type { Filter, NormalisedRow, WorksheetStructure } from '../../api/types.ts';
import { createPersonForm } from '../pull/person-values.ts';
import { updatedBetween } from '../sources/updated-since-filter.ts';

/** Row ids per `rowid in` request. */
export const IDS_PER_QUERY = 500;

/** One row of a key scan: its id and its key fields (by id and alias), in a person's form. */
export interface KeyScanRow {
  id: string;
  values: Record<string, unknown>;
}

/** Every row's id and `fieldIds`' values. */
export async function* scanWorksheetKeys(
  client: PlatformClient,
  structure: WorksheetStructure,
  fieldIds: readonly string[],
): AsyncGenerator<KeyScanRow> {
  const normalise = createRowNormaliser({ structure, timeZone: client.organisation.timeZone });
  const personForm = createPersonForm(structure);
  for await (const row of iterateRows((body) => client.rows.list(structure.id, body), {
    includeSystemFields: false,
    fields: [...fieldIds],
  })) {
    const normalised = normalise(row);
    yield { id: normalised.id, values: personForm(normalised.values) };
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

/** The rows of `filter` (every row without one) in a person's form, system fields included. */
export async function* readWorksheetRows(
  client: PlatformClient,
  structure: WorksheetStructure,
  filter?: Filter,
): AsyncGenerator<NormalisedRow> {
  const normalise = createRowNormaliser({ structure, timeZone: client.organisation.timeZone });
  const personForm = createPersonForm(structure);
  for await (const row of iterateRows((body) => client.rows.list(structure.id, body), {
    includeSystemFields: true,
    ...(filter === undefined ? {} : { filter }),
  })) {
    const normalised = normalise(row);
    yield { ...normalised, values: personForm(normalised.values) };
  }
}
