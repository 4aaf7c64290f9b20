import { batchJobRows, batchRows } from '../../src/sync/batch/batch-job-rows.ts';
import type { BatchRow, RowToWrite } from '../../src/sync/batch/batch-row.ts';

/**
 * An orders CSV record as the reader hands it on (a row of test/unit/sync's packing
 * tests): five columns, five fields. `key: null` leaves the key out.
 */
export function orderRow(
  index: number,
  order: string,
  options: { status?: unknown; key?: string | null; hash?: string } = {},
): BatchRow {
  const position = { index, line: index + 2 };
  const row: BatchRow = {
    index,
    source: {
      data: { order, customer: 'Acme, Inc', amount: '12.50', status: 'shipped', date: '01/02/2024' },
      position,
    },
    mapped: {
      ok: true,
      fields: [
        { id: 'f-order', value: order },
        { id: 'f-customer', value: 'Acme, Inc' },
        { id: 'f-amount', value: 12.5 },
        { id: 'f-status', value: options.status ?? 'opt-shipped' },
        { id: 'f-date', value: '2024-02-01' },
      ],
      hash: options.hash ?? 'aGFzaGg',
      position,
    },
  };
  const key = options.key === undefined ? order : options.key;
  if (key !== null) row.mapped.key = key;
  return row;
}

/**
 * `rows` as a worker reads them from a batch job the reader added: packed, through
 * Redis's JSON and unpacked. `fieldSources` names the column each field is read from.
 */
export function throughJob(
  rows: readonly BatchRow[],
  fieldSources: ReadonlyArray<string | undefined> = [],
): RowToWrite[] {
  return batchRows(JSON.parse(JSON.stringify(batchJobRows(rows, fieldSources))) as Record<string, unknown>);
}

/**
 * What the code that writes reads of each row (`index`, `source`, `mapped`), as plain
 * objects: a batch job's rows are views of their job's columns (src/sync/batch/unpack-columns.ts)
 * whose `source` and `mapped` are built at each read, so they are compared through it.
 */
export function readRows(rows: readonly BatchRow[]): BatchRow[] {
  return rows.map(({ index, source, mapped }) => ({ index, source, mapped }));
}
