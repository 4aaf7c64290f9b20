/**
 * A TRUNCATE of the captured table: every row of it is gone at once, and pgoutput says so
 * in one message with no rows. With `deletes: true` the worksheet rows of the table go too:
 * the rows the job's key index holds (those it wrote or matched by key), found by reading
 * the worksheet's keys, since the compact index keeps digests, not keys. Rows people made
 * in the worksheet under keys the table never had stay. With deletes off a TRUNCATE is left
 * like a DELETE is, and logged as a warning.
 *
 * Exactly once: the changes of the same batch after the TRUNCATE are written after it, so
 * a replay (a crash before the batch was acknowledged) must not truncate again over them.
 * The TRUNCATE's ordinal is saved once its deletes are done, and a replay skips it.
 */
import { deleteChunk } from '../write/mirror-deletes.ts';
import type { SyncContext } from '../write/sync-context.ts';
import type { CdcState } from './cdc-state.ts';

/** The worksheet's rows by key, read page by page (create-sync-context.ts, readWorksheetKeys). */
export type WorksheetKeys = () => AsyncIterable<{ key: string; rowId: string }>;

export interface TruncateOptions {
  state: Pick<CdcState, 'truncated' | 'markTruncated' | 'clearKeys'>;
  table: string;
  deletes: boolean;
  permanentDelete: boolean;
  worksheetKeys?: WorksheetKeys | undefined;
}

/** Applies the TRUNCATE numbered `ordinal`; resolves to the worksheet rows deleted. */
export async function applyTruncate(
  ctx: SyncContext,
  options: TruncateOptions,
  ordinal: number,
): Promise<number> {
  if (!options.deletes) {
    ctx.log.warn(
      { table: options.table },
      'TRUNCATE of the captured table not applied: target.deletes is off, so the worksheet keeps its rows',
    );
    return 0;
  }
  const done = await options.state.truncated(ctx.job);
  if (done !== undefined && done.runId === ctx.runId && done.index >= ordinal) return 0;
  const { index } = ctx;
  if (options.worksheetKeys === undefined || index === undefined)
    throw new Error(`TRUNCATE of ${options.table} cannot be applied: the worksheet's keys cannot be read`);
  // Every doomed row is found before the first is deleted: deleting while paging would
  // move rows between the pages still to read.
  const doomed: Array<{ key: string; rowId: string }> = [];
  let page: Array<{ key: string; rowId: string }> = [];
  const keep = async () => {
    const indexed = await index.getMany(page.map((r) => r.key));
    for (const row of page) if (indexed.get(row.key)?.rowId === row.rowId) doomed.push(row);
    page = [];
  };
  for await (const row of options.worksheetKeys()) {
    page.push(row);
    if (page.length >= 1000) await keep();
  }
  await keep();
  for (let i = 0; i < doomed.length; i += ctx.batchSize) {
    const chunk = doomed.slice(i, i + ctx.batchSize);
    await deleteChunk(
      ctx,
      chunk.map((d) => d.rowId),
      options.permanentDelete,
    );
    await index.removeMany(chunk.map((d) => d.key));
  }
  // Ids of the table's rows no longer stand for any worksheet row.
  await options.state.clearKeys(ctx.job);
  await options.state.markTruncated(ctx.job, ctx.runId, ordinal);
  ctx.log.info({ table: options.table, deleted: doomed.length }, 'TRUNCATE of the captured table applied');
  return doomed.length;
}
