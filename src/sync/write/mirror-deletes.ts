import { ApiError } from '../../ground/errors.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import type { SyncContext } from './sync-context.ts';

export interface FinalizeResult {
  /** Rows deleted by a mirror run. */
  deleted: number;
  /** Set when the run must be reported as failed (mirror safety threshold tripped). */
  refused?: string;
}

/**
 * Mirror: deletes the worksheet rows whose key the source no longer has. Runs only
 * after every batch of the run landed (the index then holds exactly the rows the run
 * wrote or found), and refuses when it would delete more than the configured share.
 */
export async function mirrorDeletes(
  spec: JobSpec,
  ctx: SyncContext,
  force: boolean,
): Promise<FinalizeResult> {
  if (ctx.mode !== 'mirror' || ctx.index === undefined) return { deleted: 0 };
  const doomed: Array<{ key: string; rowId: string }> = [];
  let page: Array<[string, string]> = [];
  let total = 0;
  const flush = async () => {
    const seen = await ctx.runs.isSeen(
      ctx.runId,
      page.map(([key]) => key),
    );
    page.forEach(([key, rowId], i) => {
      if (!seen[i]) doomed.push({ key, rowId });
    });
    page = [];
  };
  for await (const [key, entry] of ctx.index.entries()) {
    total += 1;
    page.push([key, entry.rowId]);
    if (page.length >= 1000) await flush();
  }
  await flush();
  if (doomed.length === 0) return { deleted: 0 };

  const threshold = spec.options.deleteThreshold;
  const share = doomed.length / total;
  if (share > threshold && !(force || spec.options.forceDelete)) {
    return {
      deleted: 0,
      refused:
        `mirror refused to delete ${doomed.length} of ${total} rows (${(share * 100).toFixed(1)}%, more than ` +
        `options.deleteThreshold ${(threshold * 100).toFixed(1)}%): check the source, then run again with ` +
        `--force or options.forceDelete: true`,
    };
  }

  let deleted = 0;
  for (let i = 0; i < doomed.length; i += ctx.batchSize) {
    const chunk = doomed.slice(i, i + ctx.batchSize);
    await deleteChunk(
      ctx,
      chunk.map((d) => d.rowId),
      spec.options.permanentDelete,
    );
    await ctx.index.removeMany(chunk.map((d) => d.key));
    deleted += chunk.length;
  }
  return { deleted };
}

/** Deletes are idempotent: an unknown outcome is sent again, a row already gone is done. */
export async function deleteChunk(ctx: SyncContext, rowIds: string[], permanent: boolean): Promise<void> {
  for (let round = 0; ; round += 1) {
    try {
      await ctx.rows.batchDelete(ctx.worksheetId, {
        rowIds,
        permanent,
        triggerWorkflow: ctx.triggerWorkflow,
      });
      return;
    } catch (err) {
      if (err instanceof ApiError && err.errorCode === 10007) {
        // One row already gone may fail the whole batch: the others go one by one.
        if (rowIds.length > 1) for (const rowId of rowIds) await deleteChunk(ctx, [rowId], permanent);
        return;
      }
      if (!(err instanceof ApiError && err.category === 'ambiguous') || round >= 3) throw err;
    }
  }
}
