/**
 * Creating a batch's new rows exactly once: each create is recorded `pending` before it
 * is sent, a batch the platform refuses is halved until the bad rows stand alone, and a
 * create whose answer was lost is reconciled by key before anything is created again.
 */
import { ApiError } from '../../ground/errors.ts';
import type { RowOutcome } from '../state/run-store.ts';
import type { RowToWrite } from '../batch/batch-row.ts';
import { RunStoppedError } from './run-stopped-error.ts';
import type { SyncContext } from './sync-context.ts';
import {
  apiFailure,
  deadLetter,
  indexKey,
  isCategory,
  landed,
  MAX_AMBIGUOUS_ROUNDS,
  record,
} from './batch-outcomes.ts';
import type { BatchOutcomes } from './batch-outcomes.ts';

/** Rows whose create was in flight when a worker died: found by key, or created again. */
export async function reconcilePending(
  ctx: SyncContext,
  pending: RowToWrite[],
  outcomes: BatchOutcomes,
): Promise<RowToWrite[]> {
  if (ctx.plan.keyIndex === undefined) {
    // Without a key nothing can tell whether the create landed: never guess, never
    // create twice. The rows go to the dead-letter store for a person to check.
    await deadLetter(ctx, outcomes, pending, 'ambiguous', {
      message:
        'the worker stopped while this row was being created and the job has no key to check it: ' +
        'look for it in the worksheet before replaying',
    });
    return [];
  }
  const found = await ctx.lookupKeys(pending.map(indexKey));
  const again: RowToWrite[] = [];
  const landed = new Map<number, RowOutcome>();
  const indexed = new Map<string, { rowId: string; hash: string }>();
  for (const row of pending) {
    const { key, hash } = row;
    const rowId = found.get(key ?? '');
    if (rowId === undefined) again.push(row);
    else {
      landed.set(row.index, 'created');
      indexed.set(key ?? '', { rowId, hash });
    }
  }
  await ctx.index?.setMany(indexed);
  await record(ctx, outcomes, landed);
  // Re-creating these is safe: their key is in no worksheet row. Forget `pending` so
  // classification treats them as new.
  return again;
}

/**
 * The batch create of `chunk`. Not async, so that the request's row objects (built from
 * the rows for the body, which the client writes to bytes at once) are not held by a
 * frame waiting for the answer: they die young instead of being promoted.
 */
function sendCreate(ctx: SyncContext, chunk: readonly RowToWrite[]): Promise<{ rowIds: unknown }> {
  return ctx.rows.batchCreate(ctx.worksheetId, {
    rows: chunk.map((r) => ({ fields: r.fields })),
    triggerWorkflow: ctx.triggerWorkflow,
  });
}

/**
 * Creates `chunk` in one request, its rows recorded `pending` first; `round` counts the
 * reconciliations of lost answers so far.
 */
export async function createChunk(
  ctx: SyncContext,
  chunk: RowToWrite[],
  outcomes: BatchOutcomes,
  round: number,
): Promise<void> {
  if (chunk.length === 0) return;
  await record(ctx, outcomes, new Map(chunk.map((r) => [r.index, 'pending'] as const)));
  let rowIds: unknown;
  try {
    ({ rowIds } = await sendCreate(ctx, chunk));
  } catch (err) {
    if (isCategory(err, 'invalid-row', 'conflict')) {
      // Batch create is all-or-nothing (platform notes §2 [U]): halve until the bad rows stand alone.
      if (chunk.length === 1) return deadLetter(ctx, outcomes, chunk, err.category, apiFailure(err));
      const half = Math.ceil(chunk.length / 2);
      await createChunk(ctx, chunk.slice(0, half), outcomes, round);
      await createChunk(ctx, chunk.slice(half), outcomes, round);
      return;
    }
    if (isCategory(err, 'ambiguous')) {
      if (ctx.plan.keyIndex === undefined) {
        return deadLetter(ctx, outcomes, chunk, 'ambiguous', {
          ...apiFailure(err),
          message: `${err.message}; the job has no key to check whether the rows landed: look for them before replaying`,
        });
      }
      if (round >= MAX_AMBIGUOUS_ROUNDS) throw err;
      const again = await reconcilePending(ctx, chunk, outcomes);
      await createChunk(ctx, again, outcomes, round + 1);
      return;
    }
    if (err instanceof ApiError) {
      // The server answered (or the request never left): the create did not happen, so
      // the rows are not pending any more; a retry creates them without a lookup.
      await ctx.runs.clearOutcomes(
        ctx.runId,
        chunk.map((r) => r.index),
      );
      for (const r of chunk) outcomes.delete(r.index);
    }
    // Anything else (a bug, Redis gone) leaves the rows pending: a retry looks them up.
    throw err;
  }
  // Outside the try: once the create is answered, a failure to record it (Redis went
  // away) must leave the rows pending, never clear them, or a retry would create them
  // again (seen when Redis was killed and restarted mid-run).
  if (!Array.isArray(rowIds) || rowIds.length !== chunk.length) {
    throw new RunStoppedError(
      `batch create answered ${Array.isArray(rowIds) ? rowIds.length : 'no'} row ids for ${chunk.length} rows`,
      'unknown',
    );
  }
  const ids = rowIds as string[];
  await landed(
    ctx,
    outcomes,
    chunk.map((row, i) => ({ row, rowId: ids[i]!, outcome: 'created' })),
  );
}
