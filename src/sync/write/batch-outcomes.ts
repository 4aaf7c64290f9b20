/**
 * What writing a batch records as it goes: each row's outcome in the run store (and in
 * the batch's own map), the key index entry of a row that landed, and dead letters.
 */
import { ApiError } from '../../ground/errors.ts';
import type { ErrorCategory } from '../../ground/errors.ts';
import type { RowOutcome } from '../state/run-store.ts';
import type { DeadRow, Failure, RowToWrite } from '../batch/batch-row.ts';
import type { SyncContext } from './sync-context.ts';
import { deadLetterRows } from './dead-letter-rows.ts';

/** Outcomes of one batch, by row index. */
export type BatchOutcomes = Map<number, RowOutcome>;

/** Times a write whose outcome is unknown is reconciled or sent again before the batch fails. */
export const MAX_AMBIGUOUS_ROUNDS = 3;

/** The row's key as the key index and lookups take it ('' for none). */
export const indexKey = (row: RowToWrite): string => row.key ?? '';

/** Whether `err` is a platform error of one of `categories`. */
export function isCategory(err: unknown, ...categories: ErrorCategory[]): err is ApiError {
  return err instanceof ApiError && categories.includes(err.category);
}

/** Rows the worksheet now holds as `rowId`: their key index entries, then their outcomes. */
export async function landed(
  ctx: SyncContext,
  outcomes: BatchOutcomes,
  items: Array<{ row: RowToWrite; rowId: string; outcome: RowOutcome }>,
): Promise<void> {
  if (items.length === 0) return;
  if (ctx.index !== undefined) {
    await ctx.index.setMany(
      new Map(
        items.map((i) => {
          const { key, hash } = i.row;
          return [key ?? '', { rowId: i.rowId, hash }];
        }),
      ),
    );
  }
  await record(ctx, outcomes, new Map(items.map((i) => [i.row.index, i.outcome])));
}

/** Dead-letters rows of this batch (idempotently: the entry id is the run and the row's index). */
export function deadLetter(
  ctx: SyncContext,
  outcomes: BatchOutcomes,
  rows: readonly DeadRow[],
  category: ErrorCategory,
  failure: Failure,
): Promise<void> {
  return deadLetterRows(ctx, rows, category, failure, outcomes);
}

/** Records outcomes in the run store, then in the batch's own map. */
export async function record(
  ctx: SyncContext,
  outcomes: BatchOutcomes,
  items: ReadonlyMap<number, RowOutcome>,
): Promise<void> {
  if (items.size === 0) return;
  await ctx.runs.setOutcomes(ctx.runId, items);
  items.forEach((outcome, index) => outcomes.set(index, outcome));
}

/** A dead letter's failure from a platform error: its message and code. */
export function apiFailure(err: ApiError): Failure {
  return { message: err.message, ...(err.errorCode === undefined ? {} : { errorCode: err.errorCode }) };
}
