/**
 * Updating a batch's matched rows: only the fields that really changed, rows sharing a
 * change set in one batch update, the others one request each; a row the index named
 * but the worksheet no longer has is looked up by key again, or created again.
 */
import type { FieldValue, NormalisedRow } from '../../api/types.ts';
import type { RowOutcome } from '../state/run-store.ts';
import type { RowToWrite } from '../batch/batch-row.ts';
import { inPool } from './in-pool.ts';
import type { SyncContext } from './sync-context.ts';
import {
  apiFailure,
  deadLetter,
  indexKey,
  isCategory,
  landed,
  MAX_AMBIGUOUS_ROUNDS,
} from './batch-outcomes.ts';
import type { BatchOutcomes } from './batch-outcomes.ts';
import { createChunk } from './create-rows.ts';

/** Single-row updates of one batch in flight at once. */
const SINGLE_UPDATES_AT_ONCE = 4;

/** A row to compare with the worksheet row `rowId`; `current` when a lookup already read it. */
export type Update = { row: RowToWrite; rowId: string; current?: NormalisedRow };

/** Writes the matched rows: the changed ones updated, the same ones recorded unchanged, gone ones found again or created. */
export async function writeUpdates(
  ctx: SyncContext,
  updates: Update[],
  outcomes: BatchOutcomes,
): Promise<void> {
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
