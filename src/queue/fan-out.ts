import type { Job, Queue } from 'bullmq';
import { rowsPerBatchJob } from '../sync/batch-job-size.ts';
import { keyOfRecord } from '../sync/key-of-record.ts';
import { readBatches } from '../sync/read-batches.ts';
import type { ReadProgress } from '../sync/read-batches.ts';
import type { SyncContext } from '../sync/sync-context.ts';
import type { Source } from '../sync/types.ts';
import { deadLetterRows } from '../sync/write-batch.ts';
import type { BatchJobData, RunJobData } from './queues.ts';
import type { Runtime } from './runtime.ts';

/**
 * Batch jobs of one parent waiting or running at once: bounds the rows held in Redis to
 * about 64 platform batches, and never fewer jobs than several workers can share.
 */
function maxOutstandingJobs(batchSize: number, rowsPerJob: number): number {
  return Math.max(16, Math.ceil((64 * batchSize) / rowsPerJob));
}

/**
 * Reads a source, maps it and adds one batch job per {@link rowsPerBatchJob} rows (ten
 * platform batches, so creates and shared change sets fill whole platform batches) as a
 * child of `parent`.
 * Batch job ids are derived from the parent (`<parent>-<n>`), so reading again after a
 * crash re-adds the same ids: BullMQ ignores those still present, and rows of batches
 * already done are skipped by their recorded outcomes.
 */
export async function fanOutBatches(
  rt: Pick<Runtime, 'runs' | 'settings'>,
  batches: Queue<BatchJobData>,
  parent: Job<RunJobData>,
  ctx: SyncContext,
  source: Source,
  signal?: AbortSignal,
): Promise<{ progress: ReadProgress; batches: number }> {
  const progress: ReadProgress = { read: 0, cursor: undefined };
  const { plan } = ctx;
  let batchNo = 0;
  const perJob = await rowsPerJob(parent, ctx.batchSize);
  const outstanding = maxOutstandingJobs(ctx.batchSize, perJob);
  for await (const rows of readBatches(source, {
    plan,
    batchSize: perJob,
    progress,
    maxCellBytes: rt.settings.maxCellBytes,
    onRejected: async (rejected) => {
      if (ctx.mode === 'mirror') {
        // A record the mapping refused still names a row the source has: never delete it.
        const keys = rejected
          .map((r) => keyOfRecord(plan, r.source.data))
          .filter((k): k is string => k !== undefined);
        await rt.runs.markSeen(ctx.runId, keys);
      }
      for (const r of rejected)
        await deadLetterRows(ctx, [{ index: r.index, source: r.source }], 'invalid-row', r.failure);
    },
  })) {
    if (ctx.mode === 'mirror')
      await rt.runs.markSeen(
        ctx.runId,
        rows.map((r) => r.mapped.key ?? ''),
      );
    await waitForRoom(parent, outstanding, signal);
    await batches.add(
      'batch',
      { runId: ctx.runId, job: ctx.job, batchNo, rows },
      {
        jobId: `${parent.id ?? ctx.runId}-${batchNo}`,
        parent: { id: parent.id!, queue: parent.queueQualifiedName },
        attempts: rt.settings.batchAttempts,
        backoff: { type: 'exponential', delay: rt.settings.batchBackoffMs, jitter: 0.5 },
        removeOnComplete: true,
        // A failed batch keeps its rows in Redis: kept a week at most, a thousand at most.
        removeOnFail: { age: 7 * 86_400, count: 1000 },
        ignoreDependencyOnFailure: true,
      },
    );
    batchNo += 1;
    await parent.updateProgress({ read: progress.read, batches: batchNo });
    signal?.throwIfAborted();
  }
  return { progress, batches: batchNo };
}

/**
 * Rows per batch job of this parent. Batch job ids are `<parent>-<n>`, so a re-read
 * must cut the rows as the first read did, or a row could sit in two live jobs at once;
 * the size is kept in the parent's data, and a read begun by a version that cut one job
 * per platform batch (children, no size kept) goes on that way.
 */
async function rowsPerJob(parent: Job<RunJobData>, batchSize: number): Promise<number> {
  if (typeof parent.data.rowsPerJob === 'number') return parent.data.rowsPerJob;
  const counts = await parent.getDependenciesCount();
  const begun = Object.values(counts).some((n) => (n ?? 0) > 0);
  const rows = begun ? batchSize : rowsPerBatchJob(batchSize);
  await parent.updateData({ ...parent.data, rowsPerJob: rows });
  return rows;
}

/** Backpressure: a fast source must not park a million rows in Redis ahead of the writers. */
async function waitForRoom(parent: Job, limit: number, signal?: AbortSignal): Promise<void> {
  for (;;) {
    signal?.throwIfAborted();
    const counts = await parent.getDependenciesCount({ unprocessed: true });
    if ((counts.unprocessed ?? 0) < limit) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Shifts a chunk's record ordinals so that rows of different chunks never share one. */
export async function* offsetIndexes(source: Source, offset: number): Source {
  for await (const record of source) {
    yield offset === 0
      ? record
      : { ...record, position: { ...record.position, index: record.position.index + offset } };
  }
}
