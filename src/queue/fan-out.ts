import type { Job, Queue } from 'bullmq';
import { traceData } from '../ground/tracing.ts';
import { rowsPerBatchJob } from '../sync/batch/batch-job-size.ts';
import type { BatchRow } from '../sync/batch/batch-row.ts';
import { keyOfRecord } from '../sync/read/key-of-record.ts';
import { batchJobRows } from '../sync/batch/batch-job-rows.ts';
import { readBatches } from '../sync/read/read-batches.ts';
import type { ReadProgress } from '../sync/read/read-batches.ts';
import { settleUnchanged } from '../sync/write/settle-unchanged.ts';
import { stateKey } from '../sync/state/redis-types.ts';
import type { SyncContext } from '../sync/write/sync-context.ts';
import { chunksOf, hasRecordChunks, recordChunks } from '../sync/sources/record-chunks.ts';
import type { Source, SourceRecord } from '../sync/model/types.ts';
import { deadLetterRows } from '../sync/write/write-batch.ts';
import type { BatchJobData, RunJobData } from './queues.ts';
import type { Runtime } from './runtime.ts';

/** How often the parent job's progress (rows read, jobs added) is updated while reading. */
const PROGRESS_EVERY_MS = 500;

/**
 * Batch jobs of one parent waiting or running at once: bounds the rows held in Redis to
 * about 64 platform batches, and never fewer jobs than several workers can share.
 */
function maxOutstandingJobs(batchSize: number, rowsPerJob: number): number {
  return Math.max(16, Math.ceil((64 * batchSize) / rowsPerJob));
}

/**
 * Reads a source, maps it and adds batch jobs as children of `parent`. Unchanged rows
 * are settled as they are read (sync/write/settle-unchanged.ts), and each job holds up to
 * {@link rowsPerBatchJob} rows to write (ten platform batches), so creates and shared
 * change sets fill whole platform batches however sparse they are in the source.
 * Batch job ids are derived from the parent (`<parent>-<n>`), so reading again after a
 * crash re-adds the same ids: BullMQ ignores those still present, and rows of batches
 * already done are skipped by their recorded outcomes.
 */
export async function fanOutBatches(
  rt: Pick<Runtime, 'runs' | 'settings' | 'redis' | 'statePrefix'>,
  batches: Queue<BatchJobData>,
  parent: Job<RunJobData>,
  ctx: SyncContext,
  source: Source,
  signal?: AbortSignal,
): Promise<{ progress: ReadProgress; batches: number }> {
  const progress: ReadProgress = { read: 0, cursor: undefined };
  const { plan } = ctx;
  let batchNo = 0;
  const perJob = rowsPerBatchJob(ctx.batchSize);
  const outstanding = maxOutstandingJobs(ctx.batchSize, perJob);
  const cuts = await createCuts(rt, ctx.runId, parent);

  const room = createRoom(parent, outstanding);
  const fieldSources = plan.fields.map((f) => f.column);
  // What bull-board shows of the read: a few updates a second, not one per job.
  let shownAt = 0;
  async function showProgress(force = false): Promise<void> {
    const now = performance.now();
    if (!force && now - shownAt < PROGRESS_EVERY_MS) return;
    shownAt = now;
    await parent.updateProgress({ read: progress.read, batches: batchNo });
  }

  async function addJob(rows: BatchRow[]): Promise<void> {
    if (rows.length > 0) {
      await room.take(signal);
      await batches.add(
        'batch',
        { runId: ctx.runId, job: ctx.job, batchNo, ...batchJobRows(rows, fieldSources), ...traceData() },
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
    }
    batchNo += 1;
    await showProgress();
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
    await showProgress();
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
  await showProgress(true);
  return { progress, batches: batchNo };
}

/**
 * Where each batch job of a parent ends (the place of its last row among the mapped
 * rows read), in Redis. With unchanged rows settled at read time, which rows a job
 * holds depends on the key index, and that changes as jobs write; a row not yet written
 * keeps its class, so cutting a re-read at the stored places gives every unwritten row
 * the job id it had. Each end is stored before its job is added.
 */
async function createCuts(
  rt: Pick<Runtime, 'redis' | 'statePrefix' | 'settings'>,
  runId: string,
  parent: Job,
): Promise<{ stored: number[]; store(index: number): Promise<void> }> {
  // Row state of the run: it expires with the run's outcomes.
  const key = stateKey(rt.statePrefix, 'run', runId, 'cuts', parent.id ?? '');
  const ttl = Math.max(1, Math.round(rt.settings.rowStateTtlDays * 86_400));
  const stored = (await rt.redis.lrange(key, 0, -1)).map(Number);
  return {
    stored,
    async store(index) {
      await rt.redis.multi().rpush(key, String(index)).expire(key, ttl).exec();
      stored.push(index);
    },
  };
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

/** A record with its ordinal shifted by `offset`. */
function shifted(record: SourceRecord, offset: number): SourceRecord {
  return { ...record, position: { ...record.position, index: record.position.index + offset } };
}

/**
 * Shifts a chunk's record ordinals so that rows of different chunks never share one. A
 * source that reads a chunk at a time (sync/sources/record-chunks.ts) still does, shifted.
 */
export function offsetIndexes(source: Source, offset: number): Source {
  if (offset === 0) return source;
  async function* records(): AsyncGenerator<SourceRecord> {
    for await (const record of source) yield shifted(record, offset);
  }
  if (!hasRecordChunks(source)) return records();
  async function* shiftedChunks(): AsyncGenerator<SourceRecord[]> {
    for await (const chunk of chunksOf(source)!) yield chunk.map((record) => shifted(record, offset));
  }
  return Object.assign(records(), { [recordChunks]: shiftedChunks });
}
