import { WaitingChildrenError } from 'bullmq';
import type { Job, Queue } from 'bullmq';
import { createSyncContext } from '../sync/create-sync-context.ts';
import { TERMINAL_STATUSES } from '../sync/state/run-store.ts';
import { fanOutBatches, offsetIndexes } from './fan-out.ts';
import { openSource } from './open-source.ts';
import type { BatchJobData, RunJobData } from './queues.ts';
import type { Runtime } from './runtime.ts';

/** Record ordinals of chunk n start at n × this, so chunks never share an outcome slot. */
const CHUNK_INDEX_STRIDE = 1_000_000_000;

/**
 * A chunk of a backfill: reads its piece of the cursor range and fans out batch jobs as
 * its own children, then waits for them. The run job above it waits for every chunk,
 * then finalizes the run once.
 */
export function createChunkProcessor(
  rt: Pick<
    Runtime,
    | 'logger'
    | 'prepareRun'
    | 'runs'
    | 'syncDeps'
    | 'settings'
    | 'clientFor'
    | 'deadLetters'
    | 'env'
    | 'redis'
    | 'statePrefix'
  >,
  batches: Queue<BatchJobData>,
) {
  return async function processChunk(
    job: Job<RunJobData>,
    token?: string,
    signal?: AbortSignal,
  ): Promise<void> {
    const { runId, chunk } = job.data;
    if (runId === undefined || chunk === undefined)
      throw new Error(`chunk job ${job.id ?? ''} without run or range`);
    if (job.data.step === 'finalize') return;
    const record = await rt.runs.get(runId);
    if (record === undefined || TERMINAL_STATUSES.has(record.status)) return;
    const log = rt.logger.child({ job: job.data.job, runId, chunk: chunk.no });
    const { spec, file, client, prepared } = await rt.prepareRun(job.data.job, runId);
    const ctx = createSyncContext(
      spec,
      prepared!,
      { runId, attempt: job.attemptsMade + 1 },
      { ...rt.syncDeps(client, log), full: record.compare === 'full' },
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
    const { progress, batches: count } = await fanOutBatches(
      rt,
      batches,
      job,
      ctx,
      offsetIndexes(source, chunk.no * CHUNK_INDEX_STRIDE),
      signal,
    );
    await rt.runs.setChunkRead(runId, chunk.no, progress.read, count);
    await job.updateData({ ...job.data, step: 'finalize' });
    if (token !== undefined && (await job.moveToWaitingChildren(token))) throw new WaitingChildrenError();
  };
}
