import type { PlatformClient } from '../api/create-platform-client.ts';
import { iterateRows } from '../api/rows/iterate-rows.ts';
import { createRowNormaliser } from '../api/rows/normalise-row.ts';
import type { ReadWorksheetRows } from './sources/source-deps.ts';

/**
 * Wires the worksheet source to a platform client: the structure is read once, so rows
 * come out keyed by field id and alias, then every page of the list query.
 */
export function createWorksheetReader(clientFor: (credentialsEnvPrefix?: string) => PlatformClient): ReadWorksheetRows {
  return async function* readWorksheetRows(query) {
    const client = clientFor(query.credentialsEnvPrefix);
    const structure = await client.worksheets.get(query.worksheet);
    const normalise = createRowNormaliser({ structure });
    for await (const row of iterateRows((body) => client.rows.list(structure.id, body), {
      ...(query.filter === undefined ? {} : { filter: query.filter }),
      ...(query.view === undefined ? {} : { viewId: query.view }),
      ...(query.fields === undefined ? {} : { fields: query.fields }),
    }, query.signal === undefined ? {} : { signal: query.signal })) {
      yield normalise(row);
    }
  };
}
