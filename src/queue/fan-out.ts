/**
 * The queue's part of a read: the batch jobs that sync/fan-out/cut-batch-jobs.ts cuts
 * are added as children of the run (or chunk) job, with ids derived from it, no more
 * than a bounded number waiting at once.
 */
import type { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Settings } from '../../config/settings.ts';
import { traceData } from '../ground/tracing.ts';
import { rowsPerBatchJob } from '../sync/batch/batch-job-size.ts';
import { loadBatchCuts } from '../sync/fan-out/batch-cuts.ts';
import { cutBatchJobs } from '../sync/fan-out/cut-batch-jobs.ts';
import type { Source } from '../sync/model/types.ts';
import type { ReadProgress } from '../sync/read/read-batches.ts';
import type { RunStore } from '../sync/state/run-store.ts';
import type { SyncContext } from '../sync/write/sync-context.ts';
import type { BatchJobData, RunJobData } from './queues.ts';

/** How often the parent job's progress (rows read, jobs added) is updated while reading. */
const PROGRESS_EVERY_MS = 500;

/** What fanning out reads and writes besides the queues. */
export interface FanOutDeps {
  runs: Pick<RunStore, 'markSeen'>;
  /** State connection: where each job's cut is kept. */
  redis: Redis;
  statePrefix: string;
  settings: Pick<Settings, 'batchAttempts' | 'batchBackoffMs' | 'maxCellBytes' | 'rowStateTtlDays'>;
}

/**
 * Batch jobs of one parent waiting or running at once: bounds the rows held in Redis to
 * about 64 platform batches, and never fewer jobs than several workers can share.
 */
function maxOutstandingJobs(batchSize: number, rowsPerJob: number): number {
  return Math.max(16, Math.ceil((64 * batchSize) / rowsPerJob));
}

/**
 * Reads a source, maps it and adds batch jobs as children of `parent`.
 * Batch job ids are derived from the parent (`<parent>-<n>`), so reading again after a
 * crash re-adds the same ids: BullMQ ignores those still present, and rows of batches
 * already done are skipped by their recorded outcomes.
 */
export async function fanOutBatches(
  deps: FanOutDeps,
  batches: Queue<BatchJobData>,
  parent: Job<RunJobData>,
  ctx: SyncContext,
  source: Source,
  signal?: AbortSignal,
): Promise<{ progress: ReadProgress; batches: number }> {
  const { settings } = deps;
  const outstanding = maxOutstandingJobs(ctx.batchSize, rowsPerBatchJob(ctx.batchSize));
  const cuts = await loadBatchCuts(
    { redis: deps.redis, statePrefix: deps.statePrefix, rowStateTtlDays: settings.rowStateTtlDays },
    ctx.runId,
    parent.id ?? '',
  );
  const room = createRoom(parent, outstanding);
  // What bull-board shows of the read: a few updates a second, not one per job.
  let shownAt = 0;
  return cutBatchJobs(
    { runs: deps.runs, cuts, maxCellBytes: settings.maxCellBytes },
    ctx,
    source,
    {
      async add(batchNo, rows) {
        if (rows === undefined) return;
        await room.take(signal);
        await batches.add(
          'batch',
          { runId: ctx.runId, job: ctx.job, batchNo, ...rows, ...traceData() },
          {
            jobId: `${parent.id ?? ctx.runId}-${batchNo}`,
            parent: { id: parent.id!, queue: parent.queueQualifiedName },
            attempts: settings.batchAttempts,
            backoff: { type: 'exponential', delay: settings.batchBackoffMs, jitter: 0.5 },
            removeOnComplete: true,
            // A failed batch keeps its rows in Redis: kept a week at most, a thousand at most.
            removeOnFail: { age: 7 * 86_400, count: 1000 },
            ignoreDependencyOnFailure: true,
          },
        );
      },
      async progress(read, batchNo, final = false) {
        const now = performance.now();
        if (!final && now - shownAt < PROGRESS_EVERY_MS) return;
        shownAt = now;
        await parent.updateProgress({ read, batches: batchNo });
      },
    },
    signal,
  );
}

/**
 * Backpressure: a fast source must not park a million rows in Redis ahead of the
 * writers. The parent's unprocessed children are counted when the room counted last
 * time is used up, not before every job: jobs only leave meanwhile, so the count can
 * only be high, never let more than `limit` wait.
 */
function createRoom(parent: Job, limit: number): { take(signal?: AbortSignal): Promise<void> } {
  let free = 0;
  return {
    async take(signal) {
      while (free <= 0) {
        signal?.throwIfAborted();
        const counts = await parent.getDependenciesCount({ unprocessed: true });
        free = limit - (counts.unprocessed ?? 0);
        if (free <= 0) await new Promise((r) => setTimeout(r, 100));
      }
      free -= 1;
    },
  };
}
