import { describe, expect, it } from 'vitest';
import {
  BATCH_ROWS_FORMAT,
  batchJobRows,
  batchRowIndexes,
  batchRows,
  UnreadableBatchError,
} from '../../../../src/sync/batch/batch-job-rows.ts';
import type { BatchRow } from '../../../../src/sync/batch/batch-row.ts';
import { orderRow, readRows } from '../../../helpers/batch-rows.ts';

const SOURCES = ['order', 'customer', 'amount', 'status', 'date'];
const stored = <T>(data: T): T => JSON.parse(JSON.stringify(data)) as T;

describe('batch job rows: one format, written and read', () => {
  it('gives the worker back the rows the reader added, after Redis', () => {
    const rows: BatchRow[] = [orderRow(4, 'A'), orderRow(9, 'B')];
    rows[1]!.source.cursor = '2024-03-01';
    const added = batchJobRows(rows, SOURCES);
    expect(added.format).toBe(BATCH_ROWS_FORMAT);
    expect(readRows(batchRows(stored(added)))).toEqual(stored(rows));
    expect(batchRowIndexes(stored(added))).toEqual([4, 9]);
  });

  it('refuses data of another format or without rows, naming what to do, rather than reading no rows', () => {
    const added = batchJobRows([orderRow(0, 'A')], SOURCES);
    for (const data of [
      { ...added, format: BATCH_ROWS_FORMAT + 1 },
      { format: 4, packed: null, columnar: added.columnar },
      { rows: [] },
      { format: BATCH_ROWS_FORMAT, columnar: { n: 'x' } },
    ] as Array<Record<string, unknown>>) {
      expect(() => batchRows(data)).toThrow(UnreadableBatchError);
      expect(batchRowIndexes(data)).toBeUndefined();
    }
    expect(() => batchRows({ ...added, format: 7 })).toThrow(
      /not rows of format 1, the one this worker reads \(format 7, fields format, columnar\).*workers of one version/,
    );
  });
});
