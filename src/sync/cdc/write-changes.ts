/**
 * Writes a batch of captured changes through the engine's one writer (write-batch.ts):
 * the same mapping, key index, outcome ledger, limiter and dead letters as every run.
 * Within a batch the last change of a row wins; deletes go first, so that a key a row
 * gave up and another row took is deleted before it is written again.
 */
import type { BatchRow } from '../batch/batch-row.ts';
import { rowToWrite } from '../batch/batch-row.ts';
import { deadLetterRows } from '../write/dead-letter-rows.ts';
import { deleteChunk } from '../write/mirror-deletes.ts';
import { keyFields } from '../mapping/compose-key.ts';
import { mapRecord } from '../mapping/map-record.ts';
import type { MappingPlan } from '../mapping/plan-types.ts';
import { keyOfRecord } from '../read/key-of-record.ts';
import type { SyncContext } from '../write/sync-context.ts';
import { writeBatch } from '../write/write-batch.ts';
import { applyTruncate } from './apply-truncate.ts';
import type { WorksheetKeys } from './apply-truncate.ts';
import type { CdcState } from './cdc-state.ts';

/** One captured change, numbered in its run. */
export interface Change {
  /** `truncate`: every row of the table is gone (apply-truncate.ts); its `id` is empty. */
  op: 'upsert' | 'delete' | 'truncate';
  /** Ordinal in the run: the unit of exactly-once. */
  index: number;
  /** The row's key column value, as text. */
  id: string;
  /** The new row (upsert); the old row or its key columns (delete). */
  data: Record<string, unknown>;
  /** When its transaction committed (ms since the epoch); undefined for snapshot rows. */
  commitTime?: number;
}

/** What writing a batch did. */
export interface ChangesWritten {
  written: number;
  deleted: number;
  deadLettered: number;
}

export interface WriteChangesOptions {
  state: CdcState;
  /** The captured table, as the job names it. */
  table: string;
  keyColumn: string;
  /** `target.deletes` is on: a deleted row is deleted in the worksheet. */
  deletes: boolean;
  permanentDelete: boolean;
  /** Reads the worksheet's keys, which a TRUNCATE needs; without it a TRUNCATE fails the batch. */
  worksheetKeys?: WorksheetKeys | undefined;
}

/**
 * Whether the target key can be told from the key column alone. Otherwise each row's key
 * is remembered by its id, since a delete carries only the old row's primary key.
 */
export function keyFromIdOnly(plan: MappingPlan, keyColumn: string): boolean {
  return keyFields(plan).every((f) => f.hasConstant || f.column === keyColumn);
}

/**
 * Writes a batch. A TRUNCATE in it deletes every row of the table, so the changes before
 * the last one are moot: the TRUNCATE is applied, then the changes after it are written.
 */
export async function writeChanges(
  ctx: SyncContext,
  options: WriteChangesOptions,
  changes: readonly Change[],
): Promise<ChangesWritten> {
  const cut = changes.findLastIndex((c) => c.op === 'truncate');
  if (cut < 0) return writeRowChanges(ctx, options, changes);
  const truncated = await applyTruncate(ctx, options, changes[cut]!.index);
  const rest = await writeRowChanges(ctx, options, changes.slice(cut + 1));
  return { ...rest, deleted: rest.deleted + truncated };
}

async function writeRowChanges(
  ctx: SyncContext,
  options: WriteChangesOptions,
  changes: readonly Change[],
): Promise<ChangesWritten> {
  const { plan } = ctx;
  const last = new Map<string, Change>();
  for (const change of changes) {
    last.delete(change.id);
    last.set(change.id, change);
  }
  const upserts = [...last.values()].filter((c) => c.op === 'upsert');
  const removed = [...last.values()].filter((c) => c.op === 'delete');
  const byId = !keyFromIdOnly(plan, options.keyColumn);
  const known = byId ? await options.state.keysOf(ctx.job, [...last.keys()]) : new Map<string, string>();

  const rows: BatchRow[] = [];
  const learned = new Map<string, string>();
  const doomed: string[] = [];
  let deadLettered = 0;
  for (const change of upserts) {
    const source = { data: change.data, position: { index: change.index, id: change.id } };
    const mapped = mapRecord(plan, change.data, source);
    if (!mapped.ok || mapped.key === undefined) {
      const message = mapped.ok
        ? 'the key field is empty'
        : mapped.errors.map((e) => `${e.field}: ${e.reason}`).join('; ');
      await deadLetterRows(ctx, [{ index: change.index, source }], 'invalid-row', { message });
      deadLettered += 1;
      continue;
    }
    rows.push({ index: change.index, source, mapped });
    const before = known.get(change.id);
    // The row's key changed: the worksheet row of its old key no longer stands for it.
    if (before !== undefined && before !== mapped.key && options.deletes) doomed.push(before);
    if (byId) learned.set(change.id, mapped.key);
  }
  for (const change of removed) {
    const key = byId ? known.get(change.id) : keyOfRecord(plan, change.data);
    if (key !== undefined) doomed.push(key);
  }
  const deleted = options.deletes ? await deleteKeys(ctx, doomed, options.permanentDelete) : 0;
  if (byId)
    await options.state.forgetKeys(
      ctx.job,
      removed.map((c) => c.id),
    );
  const outcomes = rows.length === 0 ? new Map() : await writeBatch(ctx, rows.map(rowToWrite));
  if (byId) await options.state.learnKeys(ctx.job, learned);
  for (const outcome of outcomes.values()) if (String(outcome).startsWith('dead:')) deadLettered += 1;
  return { written: rows.length, deleted, deadLettered };
}

/**
 * Deletes the worksheet rows holding `keys`: found by the key index, else asked of the
 * platform (a row made before the index knew it). A key in no row is already deleted,
 * which is what a replayed delete finds.
 */
async function deleteKeys(ctx: SyncContext, keys: readonly string[], permanent: boolean): Promise<number> {
  const unique = [...new Set(keys)];
  if (unique.length === 0 || ctx.index === undefined) return 0;
  const indexed = await ctx.index.getMany(unique);
  const rowIds = new Map<string, string>();
  for (const [key, entry] of indexed) rowIds.set(key, entry.rowId);
  const unknown = unique.filter((k) => !indexed.has(k));
  if (unknown.length > 0) for (const [key, rowId] of await ctx.lookupKeys(unknown)) rowIds.set(key, rowId);
  const doomed = [...rowIds.entries()];
  for (let i = 0; i < doomed.length; i += ctx.batchSize) {
    const chunk = doomed.slice(i, i + ctx.batchSize);
    await deleteChunk(
      ctx,
      chunk.map(([, rowId]) => rowId),
      permanent,
    );
    await ctx.index.removeMany(chunk.map(([key]) => key));
  }
  return doomed.length;
}
