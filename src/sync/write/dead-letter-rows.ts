import type { ErrorCategory } from '../../ground/errors.ts';
import type { DeadRow, Failure } from '../batch/batch-row.ts';
import { keyOfRecord } from '../read/key-of-record.ts';
import type { RowOutcome } from '../state/run-store.ts';
import type { SyncContext } from './sync-context.ts';

/** The row's key, kept on its dead letter so that the row landing later resolves it. */
function keyOf(ctx: SyncContext, row: DeadRow): { key?: string } {
  const key = row.mapped?.key ?? keyOfRecord(ctx.plan, row.source.data);
  return key === undefined ? {} : { key };
}

/**
 * Dead-letters rows (idempotently: the entry id is the run and the row's index) and
 * records their outcome, in the run and in `outcomes` when a batch keeps them. The one
 * way in: records the reader's mapping refused, rows a batch left open on its last
 * attempt, and rows a write refused.
 */
export async function deadLetterRows(
  ctx: SyncContext,
  rows: readonly DeadRow[],
  category: ErrorCategory,
  failure: Failure,
  outcomes?: Map<number, RowOutcome>,
): Promise<void> {
  await ctx.deadLetters.add(
    rows.map((row) => ({
      id: `${ctx.runId}:${row.index}`,
      job: ctx.job,
      runId: ctx.runId,
      category,
      message: failure.message,
      ...(failure.errorCode === undefined ? {} : { errorCode: failure.errorCode }),
      ...(failure.field === undefined ? {} : { field: failure.field }),
      source: row.source,
      ...keyOf(ctx, row),
      ...(row.mapped === undefined ? {} : { payload: row.mapped.fields }),
      attempts: ctx.attempt,
    })),
  );
  const dead = new Map(rows.map((r) => [r.index, `dead:${category}` as const]));
  if (dead.size === 0) return;
  await ctx.runs.setOutcomes(ctx.runId, dead);
  dead.forEach((outcome, index) => outcomes?.set(index, outcome));
}
