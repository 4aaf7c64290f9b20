import { RowbridgeError } from '../../ground/errors.ts';
import type { ErrorCategory } from '../../ground/errors.ts';
import type { BatchRow, RowToWrite } from './batch-row.ts';
import { columnarIndexes, isColumnar } from './columnar-rows.ts';
import type { ColumnarRows } from './columnar-rows.ts';
import { packColumns } from './pack-columns.ts';
import { unpackColumns } from './unpack-columns.ts';

/**
 * The format of a batch job's rows: the one this version writes and reads
 * (./columnar-rows.ts). A Redis shared with workers of another format is refused where a
 * worker starts (./state/state-version.ts); a job of another format is refused here too,
 * before anything is written, rather than read as a batch of no rows.
 */
export const BATCH_ROWS_FORMAT = 1;

/** A batch job's data is not rows of {@link BATCH_ROWS_FORMAT}. */
export class UnreadableBatchError extends RowbridgeError {
  override name = 'UnreadableBatchError';
  override readonly code: string = 'ROWBRIDGE_UNREADABLE_BATCH';
  // Another version's data: no attempt of this worker reads it, a deployment must change.
  override readonly category: ErrorCategory = 'config';
}

/** What a batch job carries of its rows. */
export interface BatchJobRows {
  format: typeof BATCH_ROWS_FORMAT;
  columnar: ColumnarRows;
}

/** A batch job's data for `rows`; `fieldSources` names the column each field is read from. */
export function batchJobRows(
  rows: readonly BatchRow[],
  fieldSources: ReadonlyArray<string | undefined>,
): BatchJobRows {
  return { format: BATCH_ROWS_FORMAT, columnar: packColumns(rows, fieldSources) };
}

/** The rows of a batch job's data; throws {@link UnreadableBatchError} for any other data. */
export function batchRows(data: { format?: unknown; columnar?: unknown }): RowToWrite[] {
  if (data.format === BATCH_ROWS_FORMAT && isColumnar(data.columnar)) return unpackColumns(data.columnar);
  throw new UnreadableBatchError(
    `batch job data is not rows of format ${BATCH_ROWS_FORMAT}, the one this worker reads ` +
      `(format ${JSON.stringify(data.format ?? null)}, fields ${Object.keys(data).join(', ')}): ` +
      'another version of rowbridge added it; run workers of one version on one Redis',
  );
}

/** The row indexes a batch job holds (for summaries), or `undefined` for data of another format. */
export function batchRowIndexes(data: { format?: unknown; columnar?: unknown }): number[] | undefined {
  return data.format === BATCH_ROWS_FORMAT && isColumnar(data.columnar)
    ? columnarIndexes(data.columnar)
    : undefined;
}
