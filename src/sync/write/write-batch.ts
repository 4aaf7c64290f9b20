import type { NormalisedRow } from '../../api/types.ts';
import type { RowOutcome } from '../state/run-store.ts';
import type { RowToWrite } from '../batch/batch-row.ts';
import { classifyRow } from './classify-row.ts';
import type { SyncContext } from './sync-context.ts';
import { deadLetterRows } from './dead-letter-rows.ts';
import { deadLetter, indexKey, record } from './batch-outcomes.ts';
import type { BatchOutcomes } from './batch-outcomes.ts';
import { createChunk, reconcilePending } from './create-rows.ts';
import { writeUpdates } from './update-rows.ts';
import type { Update } from './update-rows.ts';

export { deadLetterRows };

/**
 * Writes one batch so that, whatever fails or crashes in between, every row lands
 * exactly once: a row's outcome is recorded in Redis before (`pending`) and after each
 * create; a retried batch skips rows already done and reconciles pending ones by key
 * before creating anything again. Bad rows are isolated by bisection and dead-lettered;
 * the good ones land.
 */
export async function writeBatch(ctx: SyncContext, rows: readonly RowToWrite[]): Promise<BatchOutcomes> {
  const outcomes: BatchOutcomes = new Map();
  const known = await ctx.runs.getOutcomes(
    ctx.runId,
    rows.map((r) => r.index),
  );
  const todo: RowToWrite[] = [];
  const pending: RowToWrite[] = [];
  for (const row of rows) {
    const outcome = known.get(row.index);
    if (outcome === undefined) todo.push(row);
    else if (outcome === 'pending') pending.push(row);
    else outcomes.set(row.index, outcome);
  }
  if (pending.length > 0) todo.push(...(await reconcilePending(ctx, pending, outcomes)));
  if (todo.length === 0) return outcomes;

  const resolved = await ctx.resolveReferences(todo);
  const ready: RowToWrite[] = [];
  for (const row of todo) {
    const failure = resolved.get(row.index);
    if (failure === undefined) ready.push(row);
    else await deadLetter(ctx, outcomes, [row], 'invalid-row', failure);
  }

  const { creates, updates } = await classify(ctx, ready, outcomes);
  for (let i = 0; i < creates.length; i += ctx.batchSize) {
    await createChunk(ctx, creates.slice(i, i + ctx.batchSize), outcomes, 0);
  }
  if (updates.length > 0) await writeUpdates(ctx, updates, outcomes);
  return outcomes;
}

async function classify(
  ctx: SyncContext,
  rows: RowToWrite[],
  outcomes: BatchOutcomes,
): Promise<{ creates: RowToWrite[]; updates: Update[] }> {
  if (ctx.mode === 'append' || ctx.index === undefined) return { creates: rows, updates: [] };
  const entries = await ctx.index.getMany(rows.map(indexKey));
  // An index no full scan of this run filled may miss rows: people add rows between
  // runs, and a Redis restored from a snapshot forgets the latest creates. A key it does
  // not know is asked of the platform before anything is created for it.
  const unknown = ctx.indexComplete ? [] : rows.map(indexKey).filter((k) => k !== '' && !entries.has(k));
  const found = unknown.length === 0 ? new Map<string, NormalisedRow>() : await ctx.findByKeys(unknown);
  const creates: RowToWrite[] = [];
  const updates: Update[] = [];
  const settled = new Map<number, RowOutcome>();
  for (const row of rows) {
    const { key, hash } = row;
    const current = found.get(key ?? '');
    const matched = entries.get(key ?? '') ?? (current && { rowId: current.id, hash: '' });
    const decided = classifyRow(ctx.mode, matched, hash, !ctx.full);
    if (decided.kind === 'skip') settled.set(row.index, 'skipped');
    else if (decided.kind === 'create') creates.push(row);
    else if (decided.kind === 'unchanged') settled.set(row.index, 'unchanged');
    else updates.push({ row, rowId: decided.rowId, ...(current === undefined ? {} : { current }) });
  }
  await record(ctx, outcomes, settled);
  return { creates, updates };
}
