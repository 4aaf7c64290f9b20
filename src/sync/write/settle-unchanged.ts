import type { BatchRow } from '../batch/batch-row.ts';
import { resolveLanded } from './resolve-dead-letters.ts';
import type { RowOutcome } from '../state/run-store.ts';
import type { SyncContext } from './sync-context.ts';

/**
 * Settles, while the source is read, the rows that need no write: those whose content
 * hash equals the key index's (unchanged) and, in update mode, those no worksheet row
 * matches (skipped); returns the others, in the order given (fan-out relies on it), which
 * go to batch jobs. Batch jobs then hold only rows to write, so a job fills whole platform
 * batches of creates and change sets however sparse the changes are in the source
 * (issue 12: write requests at their floor).
 *
 * An index this run did not fill by a full scan may miss rows (people add some between
 * runs): a row whose key it does not know goes to a job, which looks the key up.
 *
 * It decides as writeBatch's own classification would: a row is settled here only when
 * nothing else owns it yet. Rows with an outcome are left out (their batch job skips
 * them anyway), rows left `pending` by a create in flight go to their job to be
 * reconciled, and rows whose references are still to be looked up always go to a job
 * (their hash is known only after the lookup). With `run --full`, appends, or no key
 * index every row goes to a job, as before. Rows settled unchanged resolve the job's
 * older dead letters about them, as a batch job's landed rows do.
 */
export async function settleUnchanged(ctx: SyncContext, rows: readonly BatchRow[]): Promise<BatchRow[]> {
  if (ctx.index === undefined || ctx.mode === 'append' || ctx.full || rows.length === 0) return [...rows];
  const known = await ctx.runs.getOutcomes(
    ctx.runId,
    rows.map((r) => r.index),
  );
  const open = rows.filter((r) => {
    const outcome = known.get(r.index);
    return outcome === undefined || outcome === 'pending';
  });
  const entries = await ctx.index.getMany(open.map((r) => r.mapped.key ?? ''));
  const settled = new Map<number, RowOutcome>();
  const toWrite: BatchRow[] = [];
  for (const row of open) {
    const entry = entries.get(row.mapped.key ?? '');
    if (known.get(row.index) === 'pending' || row.mapped.pending !== undefined) toWrite.push(row);
    else if (entry === undefined) {
      // Update mode creates nothing, but only a full scan of this run proves the key absent.
      if (ctx.mode === 'update' && ctx.indexComplete) settled.set(row.index, 'skipped');
      else toWrite.push(row);
    } else if (entry.hash === row.mapped.hash) settled.set(row.index, 'unchanged');
    else toWrite.push(row);
  }
  if (settled.size > 0) {
    // Before the outcomes: a reader that dies in between settles these rows again on its
    // re-read, and resolving finds the entries gone then, counting nothing twice.
    const landed = open.map((r) => ({ index: r.index, position: r.source.position, key: r.mapped.key }));
    await resolveLanded(ctx, { job: ctx.job, runId: ctx.runId }, landed, settled);
    await ctx.runs.setOutcomes(ctx.runId, settled);
  }
  return toWrite;
}
