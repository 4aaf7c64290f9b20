import { deleteChunk } from './mirror-deletes.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import type { SyncContext } from './sync-context.ts';

/**
 * Mirror: deletes the worksheet rows holding these keys, found through the key index,
 * and nothing else. A hint run names the rows that changed; one the source no longer has
 * is gone, and unlike a full run's sweep (mirror-deletes.ts) its absence says nothing of
 * the rows it did not name. A key the index does not know has no row of this job to
 * delete. Returns the rows deleted.
 */
export async function deleteRowsByKeys(
  spec: JobSpec,
  ctx: SyncContext,
  keys: readonly string[],
): Promise<number> {
  if (ctx.mode !== 'mirror' || ctx.index === undefined || keys.length === 0) return 0;
  const found = await ctx.index.getMany([...new Set(keys)]);
  const doomed = [...found.entries()].map(([key, entry]) => ({ key, rowId: entry.rowId }));
  for (let i = 0; i < doomed.length; i += ctx.batchSize) {
    const chunk = doomed.slice(i, i + ctx.batchSize);
    await deleteChunk(
      ctx,
      chunk.map((d) => d.rowId),
      spec.options.permanentDelete,
    );
    await ctx.index.removeMany(chunk.map((d) => d.key));
  }
  return doomed.length;
}
