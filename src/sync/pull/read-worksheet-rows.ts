import type { PlatformClient } from '../../api/create-platform-client.ts';
import { validateFilter } from '../../api/rows/filter-builder.ts';
import { iterateRows } from '../../api/rows/iterate-rows.ts';
import { createRowNormaliser } from '../../api/rows/normalise-row.ts';
import type { Filter } from '../../api/types.ts';
import { createPersonForm } from './person-values.ts';
import type { ReadWorksheetRows } from '../sources/source-deps.ts';

/** A group at the top: the platform's own filter generator never sends a bare condition (platform-shapes §8 [C]). */
export function topLevelGroup(filter: Filter): Filter {
  return filter.type === 'group' ? filter : { type: 'group', logic: 'AND', children: [filter] };
}

/**
 * Wires the worksheet source to a platform client: the structure is read once, so rows
 * come out keyed by field id and alias, then every page of the list query, with the
 * system fields (they are absent unless asked for, platform-shapes §5 [L]) read in the
 * organisation's zone. The job's filter is checked against the structure first: the
 * platform drops a condition it cannot apply and answers with every row
 * (platform-shapes §8), so an operator the field's type lacks fails the run with the
 * allowed list (a FilterError, category config) before any row is read.
 */
export function createWorksheetReader(
  clientFor: (credentialsEnvPrefix?: string) => PlatformClient,
): ReadWorksheetRows {
  return async function* readWorksheetRows(query) {
    const client = clientFor(query.credentialsEnvPrefix);
    const structure = await client.worksheets.get(query.worksheet);
    if (query.filter !== undefined) validateFilter(query.filter, structure, 'source.filter');
    const normalise = createRowNormaliser({ structure, timeZone: client.organisation.timeZone });
    const personForm = query.values === 'raw' ? undefined : createPersonForm(structure, query.lists);
    // The structure's answer has just set the platform's clock: its time before any page.
    query.onScanStart?.(client.serverTime());
    for await (const row of iterateRows(
      (body) => client.rows.list(structure.id, body),
      {
        includeSystemFields: true,
        ...(query.filter === undefined ? {} : { filter: topLevelGroup(query.filter) }),
        ...(query.view === undefined ? {} : { viewId: query.view }),
        ...(query.fields === undefined ? {} : { fields: query.fields }),
      },
      query.signal === undefined ? {} : { signal: query.signal },
    )) {
      const normalised = normalise(row);
      yield personForm === undefined ? normalised : { ...normalised, values: personForm(normalised.values) };
    }
  };
}
