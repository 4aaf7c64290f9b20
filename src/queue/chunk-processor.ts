import { UnrecoverableError, WaitingChildrenError } from 'bullmq';
import type { Job } from 'bullmq';
import { createSyncContext } from '../sync/write/create-sync-context.ts';
import { TERMINAL_STATUSES } from '../sync/state/run-store.ts';
import { describeUnwritten, findUnwritten, reviveFailedChildren } from './failed-children.ts';
import type { RunQueues } from './failed-children.ts';
import { fanOutBatches } from './fan-out.ts';
import { offsetIndexes } from '../sync/read/offset-indexes.ts';
import { openSource } from '../sync/read/open-source.ts';
import type { RunJobData } from './queues.ts';
import type { Logger } from '../ground/logger.ts';
import type { OpenSourceDeps } from '../sync/read/open-source.ts';
import type { RunStore } from '../sync/state/run-store.ts';
import type { FanOutDeps } from './fan-out.ts';
import type { PrepareRun, SyncDepsFor } from './runtime-types.ts';

/** What a chunk job reads its piece with and fans it out through. */
export interface ChunkProcessorDeps extends OpenSourceDeps, FanOutDeps {
  logger: Logger;
  runs: RunStore;
  prepareRun: PrepareRun;
  syncDeps: SyncDepsFor;
}

/** Record ordinals of chunk n start at n × this, so chunks never share an outcome slot. */
const CHUNK_INDEX_STRIDE = 1_000_000_000;

/**
 * A chunk of a backfill: reads its piece of the cursor range and fans out batch jobs as
 * its own children, then waits for them. The run job above it waits for every chunk,
 * then finalizes the run once. A chunk whose batch jobs failed without writing fails
 * for good, not completes: completing would remove it, and with it the record of those
 * failures (its `:failed` hash) that the run's finalizing counts (failed-children.ts).
 */
export function createChunkProcessor(rt: ChunkProcessorDeps, queues: RunQueues) {
  return async function processChunk(
    job: Job<RunJobData>,
    token?: string,
    signal?: AbortSignal,
  ): Promise<void> {
    const { runId, chunk } = job.data;
    if (runId === undefined || chunk === undefined)
      throw new Error(`chunk job ${job.id ?? ''} without run or range`);
    if (job.data.step === 'finalize') return failIfUnwritten(job, runId);
    const record = await rt.runs.get(runId);
    if (record === undefined || TERMINAL_STATUSES.has(record.status)) return;
    const log = rt.logger.child({ job: job.data.job, runId, chunk: chunk.no });
    const { spec, file, client, prepared } = await rt.prepareRun(job.data.job, runId);
    const ctx = createSyncContext(
      spec,
      prepared!,
      { runId, attempt: job.attemptsMade + 1 },
      {
        ...rt.syncDeps(client, log),
        full: record.compare === 'full',
        indexComplete: record.keyMatch !== 'index',
      },
    );
    const source = await openSource(
      rt,
      spec,
      file,
      {},
      runId,
      {
        since: chunk.since,
        sinceInclusive: chunk.sinceInclusive,
        until: chunk.until,
      },
      signal,
    );
    await reviveFailedChildren(job, queues, rt.redis);
    const { progress, batches: count } = await fanOutBatches(
      rt,
      queues.batches,
      job,
      ctx,
      offsetIndexes(source, chunk.no * CHUNK_INDEX_STRIDE),
      signal,
    );
    await rt.runs.setChunkRead(runId, chunk.no, progress.read, count);
    await job.updateData({ ...job.data, step: 'finalize' });
    if (token !== undefined && (await job.moveToWaitingChildren(token))) throw new WaitingChildrenError();
    // Every batch job was already done (or none was added).
    await failIfUnwritten(job, runId);
  };

  /** Its batch jobs are done: fails for good when one of them failed without writing. */
  async function failIfUnwritten(job: Job<RunJobData>, runId: string): Promise<void> {
    const unwritten = await findUnwritten(job, queues, rt.runs, runId);
    if (unwritten !== undefined) throw new UnrecoverableError(describeUnwritten(unwritten, job.data.job));
  }
}
