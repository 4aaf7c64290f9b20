import { rowsPerBatchJob } from '../batch/batch-job-size.ts';
import { batchJobRows } from '../batch/batch-job-rows.ts';
import type { BatchJobRows } from '../batch/batch-job-rows.ts';
import type { BatchRow } from '../batch/batch-row.ts';
import type { Source } from '../model/types.ts';
import { keyOfRecord } from '../read/key-of-record.ts';
import { readBatches } from '../read/read-batches.ts';
import type { ReadProgress } from '../read/read-batches.ts';
import type { RunStore } from '../state/run-store.ts';
import { deadLetterRows } from '../write/dead-letter-rows.ts';
import { settleUnchanged } from '../write/settle-unchanged.ts';
import type { SyncContext } from '../write/sync-context.ts';
import type { BatchCuts } from './batch-cuts.ts';

/** What cutting a source into batch jobs records besides the rows' outcomes. */
export interface CutBatchJobsDeps {
  /** Marks the keys a mirror run read (what it must not delete). */
  runs: Pick<RunStore, 'markSeen'>;
  /** Where this parent's jobs ended in an earlier read (batch-cuts.ts). */
  cuts: BatchCuts;
  /** A cell larger than this dead-letters its row. */
  maxCellBytes: number;
}

/** Where the cut jobs go (the queue adds them), and who hears how far the read is. */
export interface BatchJobTarget {
  /** Adds job number `batchNo` with these rows; it holds none when every row of it is settled. */
  add(batchNo: number, rows: BatchJobRows | undefined): Promise<void>;
  /** Rows read and jobs cut so far; `final` once the read is done. */
  progress(read: number, batches: number, final?: boolean): Promise<void>;
}

/**
 * Reads a source, maps it and cuts the rows to write into batch jobs, numbered from 0.
 * Unchanged rows are settled as they are read (sync/write/settle-unchanged.ts), and each
 * job holds up to {@link rowsPerBatchJob} rows to write (ten platform batches), so
 * creates and shared change sets fill whole platform batches however sparse they are in
 * the source. A re-read of the same parent cuts its jobs where the first read did, so
 * each job number holds the rows it held then.
 */
export async function cutBatchJobs(
  deps: CutBatchJobsDeps,
  ctx: SyncContext,
  source: Source,
  jobs: BatchJobTarget,
  signal?: AbortSignal,
): Promise<{ progress: ReadProgress; batches: number }> {
  const { runs, cuts } = deps;
  const progress: ReadProgress = { read: 0, cursor: undefined };
  const { plan } = ctx;
  let batchNo = 0;
  const perJob = rowsPerBatchJob(ctx.batchSize);
  const fieldSources = plan.fields.map((f) => f.column);

  async function addJob(rows: BatchRow[]): Promise<void> {
    await jobs.add(batchNo, rows.length > 0 ? batchJobRows(rows, fieldSources) : undefined);
    batchNo += 1;
    await jobs.progress(progress.read, batchNo);
    signal?.throwIfAborted();
  }

  let pending: BatchRow[] = [];
  // Mapped rows seen so far, and the place of the last one kept for a job.
  let read = 0;
  let last = 0;
  for await (const rows of readBatches(source, {
    plan,
    batchSize: perJob,
    progress,
    maxCellBytes: deps.maxCellBytes,
    onRejected: async (rejected) => {
      if (ctx.mode === 'mirror') {
        // A record the mapping refused still names a row the source has: never delete it.
        const keys = rejected
          .map((r) => keyOfRecord(plan, r.source.data))
          .filter((k): k is string => k !== undefined);
        await runs.markSeen(ctx.runId, keys);
      }
      for (const r of rejected)
        await deadLetterRows(ctx, [{ index: r.index, source: r.source }], 'invalid-row', r.failure);
    },
  })) {
    if (ctx.mode === 'mirror')
      await runs.markSeen(
        ctx.runId,
        rows.map((r) => r.mapped.key ?? ''),
      );
    // Rows are cut by their place in the mapped stream, which a re-read repeats. The rows
    // to write come back in the order they were given, so their places are found by
    // walking both lists.
    const base = read;
    read += rows.length;
    let at = 0;
    for (const row of await settleUnchanged(ctx, rows)) {
      while (at < rows.length && rows[at] !== row) at += 1;
      if (at === rows.length) throw new Error('fan-out: settleUnchanged returned a row out of order');
      const place = base + at;
      // A job cut by an earlier read of this parent ends where it ended then.
      while (batchNo < cuts.stored.length && place > cuts.stored[batchNo]!) {
        await addJob(pending);
        pending = [];
      }
      pending.push(row);
      last = place;
      if (batchNo >= cuts.stored.length && pending.length >= perJob) {
        await cuts.store(place);
        await addJob(pending);
        pending = [];
      }
    }
    // A long stretch of unchanged rows adds no job: the progress still moves.
    await jobs.progress(progress.read, batchNo);
    signal?.throwIfAborted();
  }
  while (batchNo < cuts.stored.length) {
    await addJob(pending);
    pending = [];
  }
  if (pending.length > 0) {
    await cuts.store(last);
    await addJob(pending);
  }
  await jobs.progress(progress.read, batchNo, true);
  return { progress, batches: batchNo };
}
