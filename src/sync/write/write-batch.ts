import { ApiError } from '../../ground/errors.ts';
import type { ErrorCategory } from '../../ground/errors.ts';
import type { FieldValue, NormalisedRow } from '../../api/types.ts';
import type { RowOutcome } from '../state/run-store.ts';
import type { DeadRow, Failure, RowToWrite } from '../batch/batch-row.ts';
import { RunStoppedError } from './run-stopped-error.ts';
import { classifyRow } from './classify-row.ts';
import { inPool } from './in-pool.ts';
import type { SyncContext } from './sync-context.ts';
import { deadLetterRows } from './dead-letter-rows.ts';

export { deadLetterRows };

/** Outcomes of one batch, by row index. */
export type BatchOutcomes = Map<number, RowOutcome>;

const MAX_AMBIGUOUS_ROUNDS = 3;

/** Single-row updates of one batch in flight at once. */
const SINGLE_UPDATES_AT_ONCE = 4;

/** The row's key as the key index and lookups take it ('' for none). */
const indexKey = (row: RowToWrite): string => row.key ?? '';

function isCategory(err: unknown, ...categories: ErrorCategory[]): err is ApiError {
  return err instanceof ApiError && categories.includes(err.category);
}

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

/** Rows whose create was in flight when a worker died: found by key, or created again. */
async function reconcilePending(
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

/** A row to compare with the worksheet row `rowId`; `current` when a lookup already read it. */
type Update = { row: RowToWrite; rowId: string; current?: NormalisedRow };

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

async function createChunk(
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

async function writeUpdates(ctx: SyncContext, updates: Update[], outcomes: BatchOutcomes): Promise<void> {
  // The index knows only hashes; the rows themselves tell which fields really changed,
  // so that rows sharing one change set go out as one batch update.
  const existing = await ctx.fetchRows(updates.filter((u) => u.current === undefined).map((u) => u.rowId));
  const unchanged: Array<{ row: RowToWrite; rowId: string; outcome: RowOutcome }> = [];
  const changes: Array<{ row: RowToWrite; rowId: string; changed: FieldValue[] }> = [];
  const gone: RowToWrite[] = [];
  for (const { row, rowId, current = existing.get(rowId) } of updates) {
    if (current === undefined) gone.push(row);
    else {
      const diff = ctx.compare(row.fields, current);
      if (diff.same) unchanged.push({ row, rowId, outcome: 'unchanged' });
      else changes.push({ row, rowId, changed: diff.changed });
    }
  }
  await landed(ctx, outcomes, unchanged);
  if (gone.length > 0) await rowGone(ctx, gone, outcomes);

  const byRowId = new Map(changes.map((c) => [c.rowId, c]));
  const singles: Array<{ item: { row: RowToWrite; rowId: string }; fields: FieldValue[] }> = [];
  for (const group of ctx.groupChangeSets(changes.map((c) => ({ rowId: c.rowId, changed: c.changed })))) {
    const members = group.rowIds.map((id) => byRowId.get(id)!);
    if (members.length === 1) singles.push({ item: members[0]!, fields: group.fields });
    // A batch job holds several platform batches of rows (batch-job-size.ts): one
    // change set can cover more rows than one write request may carry.
    else
      for (let i = 0; i < members.length; i += ctx.batchSize)
        await updateGroup(ctx, members.slice(i, i + ctx.batchSize), group.fields, outcomes);
  }
  // A job of 1,000 rows can hold hundreds of rows with changes of their own: one request
  // each, a few at once (each records its own outcome; the limiter still sets the pace).
  await inPool(singles, SINGLE_UPDATES_AT_ONCE, (s) => updateOne(ctx, s.item, s.fields, outcomes));
}

/** Writes one change set to rows that all get exactly it: one batch PATCH, or one PATCH for a lone row. */
async function updateGroup(
  ctx: SyncContext,
  members: Array<{ row: RowToWrite; rowId: string }>,
  fields: FieldValue[],
  outcomes: BatchOutcomes,
): Promise<void> {
  if (members.length === 1) return updateOne(ctx, members[0]!, fields, outcomes);
  const rowIds = members.map((m) => m.rowId);
  let failed: string[];
  try {
    const result = await ambiguousSafe(() =>
      ctx.rows.batchUpdate(ctx.worksheetId, { rowIds, fields, triggerWorkflow: ctx.triggerWorkflow }),
    );
    failed = result.failedRowIds ?? [];
  } catch (err) {
    if (!isCategory(err, 'invalid-row', 'not-found', 'conflict')) throw err;
    failed = rowIds;
  }
  const failedSet = new Set(failed);
  await landed(
    ctx,
    outcomes,
    members.filter((m) => !failedSet.has(m.rowId)).map((m) => ({ ...m, outcome: 'updated' as const })),
  );
  // One by one, so that each failing row is dead-lettered with its own code.
  for (const m of members.filter((x) => failedSet.has(x.rowId))) await updateOne(ctx, m, fields, outcomes);
}

async function updateOne(
  ctx: SyncContext,
  item: { row: RowToWrite; rowId: string },
  fields: FieldValue[],
  outcomes: BatchOutcomes,
): Promise<void> {
  try {
    await ambiguousSafe(() =>
      ctx.rows.update(ctx.worksheetId, item.rowId, { fields, triggerWorkflow: ctx.triggerWorkflow }),
    );
    await landed(ctx, outcomes, [{ ...item, outcome: 'updated' }]);
  } catch (err) {
    if (isCategory(err, 'not-found') && err.errorCode === 10007) return rowGone(ctx, [item.row], outcomes);
    if (isCategory(err, 'invalid-row', 'conflict'))
      return deadLetter(ctx, outcomes, [item.row], err.category, apiFailure(err));
    throw err;
  }
}

/**
 * The row the index named is gone. Its key may sit in another row (deleted and added
 * again by a person, or an index older than the worksheet): asked by key first and
 * updated there. Otherwise upsert and mirror create it again; update reports it.
 */
async function rowGone(ctx: SyncContext, gone: RowToWrite[], outcomes: BatchOutcomes): Promise<void> {
  await ctx.index?.removeMany(gone.map(indexKey));
  const found =
    ctx.plan.keyIndex === undefined
      ? new Map<string, NormalisedRow>()
      : await ctx.findByKeys(gone.map(indexKey));
  const elsewhere: Update[] = [];
  const rows: RowToWrite[] = [];
  for (const row of gone) {
    const current = found.get(indexKey(row));
    if (current === undefined) rows.push(row);
    else elsewhere.push({ row, rowId: current.id, current });
  }
  // Each comes with its row: none of them can be gone again here.
  if (elsewhere.length > 0) await writeUpdates(ctx, elsewhere, outcomes);
  if (rows.length === 0) return;
  if (ctx.mode === 'update') {
    return deadLetter(ctx, outcomes, rows, 'not-found', {
      errorCode: 10007,
      message: 'the matching worksheet row was deleted during the run (update mode creates no rows)',
    });
  }
  for (let i = 0; i < rows.length; i += ctx.batchSize)
    await createChunk(ctx, rows.slice(i, i + ctx.batchSize), outcomes, 0);
}

/** Updates are idempotent: one whose outcome is unknown is simply sent again. */
async function ambiguousSafe<T>(send: () => Promise<T>): Promise<T> {
  for (let round = 0; ; round += 1) {
    try {
      return await send();
    } catch (err) {
      if (!isCategory(err, 'ambiguous') || round >= MAX_AMBIGUOUS_ROUNDS) throw err;
    }
  }
}

async function landed(
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
function deadLetter(
  ctx: SyncContext,
  outcomes: BatchOutcomes,
  rows: readonly DeadRow[],
  category: ErrorCategory,
  failure: Failure,
): Promise<void> {
  return deadLetterRows(ctx, rows, category, failure, outcomes);
}

async function record(
  ctx: SyncContext,
  outcomes: BatchOutcomes,
  items: ReadonlyMap<number, RowOutcome>,
): Promise<void> {
  if (items.size === 0) return;
  await ctx.runs.setOutcomes(ctx.runId, items);
  items.forEach((outcome, index) => outcomes.set(index, outcome));
}

function apiFailure(err: ApiError): Failure {
  return { message: err.message, ...(err.errorCode === undefined ? {} : { errorCode: err.errorCode }) };
}
