import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { DelayedError, WaitingChildrenError } from 'bullmq';
import type { Job, Queue } from 'bullmq';
import type { WorksheetStructure } from '../api/types.ts';
import { classifyError } from '../ground/errors.ts';
import { createSyncContext, planJob, readWorksheetKeys } from '../sync/create-sync-context.ts';
import { mirrorDeletes } from '../sync/finalize-run.ts';
import type { JobSpec } from '../sync/job-spec/job-spec-schema.ts';
import { pullRun } from '../sync/pull-run.ts';
import { splitRange } from '../sync/split-range.ts';
import { createStructureSnapshots } from '../sync/schema-drift.ts';
import { supersedeDeadLetters } from '../sync/supersede-dead-letters.ts';
import { createSink } from '../sync/sinks/create-sink.ts';
import type { RunRecord } from '../sync/state/run-store.ts';
import type { SyncContext } from '../sync/sync-context.ts';
import { createChunkProcessor } from './chunk-processor.ts';
import { fanOutBatches } from './fan-out.ts';
import { openSource } from './open-source.ts';
import type { BatchJobData, RunJobData } from './queues.ts';
import type { Runtime, Traffic } from './runtime.ts';

export function newRunId(job: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
  return `${job}-${stamp}-${randomBytes(3).toString('hex')}`;
}

/**
 * The run job: reads the source, maps it, fans out batch jobs as its children (so
 * workers on several machines share one run), then waits for them and finalizes.
 * Steps are kept in the job data, so a run whose worker died resumes where it was:
 * reading again re-adds the same batch job ids (BullMQ ignores duplicates, and rows
 * already written are skipped by their outcomes), finalizing is idempotent.
 */
export function createRunProcessor(rt: Runtime, batches: Queue<BatchJobData>, runQueue: Queue<RunJobData>) {
  const processChunk = createChunkProcessor(rt, batches);
  const snapshots = createStructureSnapshots({ redis: rt.redis, prefix: rt.statePrefix });
  return async function processRun(
    job: Job<RunJobData>,
    token?: string,
    signal?: AbortSignal,
  ): Promise<RunRecord | undefined> {
    if (job.data.chunk !== undefined) {
      await handBackOnAbort(job, token, signal, () => processChunk(job, token, signal));
      return undefined;
    }
    return handBackOnAbort(job, token, signal, () => processRunJob(job, token, signal));
  };

  /** Whether a run holding the job lock has no live queue job any more. */
  async function isAbandoned(holder: string): Promise<boolean> {
    const held = await rt.runs.get(holder);
    if (held?.queueJobId === undefined) return false;
    const queued = await runQueue.getJob(held.queueJobId);
    if (queued === undefined) return true;
    const state = await queued.getState();
    return state === 'failed' || state === 'completed' || state === 'unknown';
  }

  async function processRunJob(
    job: Job<RunJobData>,
    token?: string,
    signal?: AbortSignal,
  ): Promise<RunRecord | undefined> {
    const runId = job.data.runId ?? newRunId(job.data.job);
    if (job.data.runId === undefined) await job.updateData({ ...job.data, runId });
    let record = await rt.runs.get(runId);
    record ??= await rt.runs.create({ runId, job: job.data.job, trigger: job.data.trigger });
    if (record.status === 'completed' || record.status === 'skipped') return record;
    const log = rt.logger.child({ job: job.data.job, runId });

    if (record.status === 'failed') return finish(record.status);
    if (record.queueJobId !== job.id && job.id !== undefined)
      await rt.runs.update(runId, { queueJobId: job.id });

    let holder = await rt.runs.acquireJob(job.data.job, runId);
    if (holder !== undefined && (await isAbandoned(holder))) {
      // BullMQ gave up on that run's job (stalled too often, or removed) without our
      // code running: the run can never finish, so it must not block the job forever.
      await rt.runs.update(holder, {
        status: 'failed',
        message: 'its queue job ended without finishing the run (the worker was lost too often)',
        finishedAt: new Date().toISOString(),
      });
      holder = await rt.runs.acquireJob(job.data.job, runId);
    }
    if (holder !== undefined) {
      await rt.runs.update(runId, {
        status: 'skipped',
        message: `run ${holder} of job ${job.data.job} is still active`,
        finishedAt: new Date().toISOString(),
      });
      return rt.runs.get(runId);
    }

    const traffic: Traffic = { requests: 0, throttled: 0, retries: 0 };
    try {
      const { spec, file } = await rt.loadJob(job.data.job);
      if (spec.sink !== undefined) return await runPullJob(spec, file);
      const client = rt.clientFor(spec.target?.app?.credentialsEnvPrefix);
      const prepared = await rt.withTraffic(traffic, () => planJob(spec, client, file, snapshots));
      const ctx = createSyncContext(
        spec,
        prepared,
        { runId, attempt: job.attemptsMade + 1 },
        rt.syncDeps(client, log),
      );

      if (job.data.step !== 'finalize') {
        await rt.runs.update(runId, {
          status: 'running',
          startedAt: record.startedAt ?? new Date().toISOString(),
          mode: ctx.mode,
          worksheet: prepared.structure.name,
        });
        log.info(
          { mode: ctx.mode, worksheet: prepared.structure.name, trigger: job.data.trigger },
          'run started',
        );
        // Built once per run: a reader restarted after a crash must not rebuild it while
        // batches of its first attempt are still writing (it would drop their entries).
        if (ctx.index !== undefined && record.indexedAt === undefined) {
          const built = await rt.withTraffic(traffic, () =>
            ctx.index!.rebuild(readWorksheetKeys(client, prepared.structure, prepared.plan)),
          );
          await rt.runs.update(runId, { indexedAt: new Date().toISOString() });
          if (built.duplicates > 0)
            log.warn(
              { duplicates: built.duplicates },
              'worksheet has rows sharing a key; the oldest is matched',
            );
        }
        if (job.data.range !== undefined) {
          // A backfill: one chunk job per piece of the range, each fanning out its own batches.
          await addChunkJobs(job, job.data.range);
        } else {
          const source = await openSource(rt, spec, file, job.data, runId);
          const { progress, batches: batchNo } = await fanOutBatches(rt, batches, job, ctx, source, signal);
          await rt.runs.update(runId, {
            read: progress.read,
            batches: batchNo,
            ...(progress.cursor === undefined ? {} : { cursor: JSON.stringify(progress.cursor) }),
          });
        }
        await job.updateData({ ...job.data, runId, step: 'finalize' });
        if (token !== undefined && (await job.moveToWaitingChildren(token))) throw new WaitingChildrenError();
      }
      return await finalize(ctx, spec, prepared.structure);
    } catch (err) {
      if (err instanceof WaitingChildrenError || signal?.aborted === true) throw err;
      const category = classifyError(err);
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      // Configuration and permission problems will not mend by retrying; others may.
      if (lastAttempt || ['config', 'auth', 'forbidden', 'quota', 'not-found'].includes(category)) {
        log.error({ err }, 'run failed');
        await rt.runs.update(runId, {
          status: 'failed',
          message: (err as Error).message,
          finishedAt: new Date().toISOString(),
        });
        await rt.runs.releaseJob(job.data.job, runId);
        return rt.runs.get(runId);
      }
      throw err;
    } finally {
      await flushTraffic();
    }

    async function finalize(
      ctx: SyncContext,
      spec: JobSpec,
      structure: WorksheetStructure,
    ): Promise<RunRecord | undefined> {
      const current = await rt.runs.get(runId);
      if (current?.status === 'failed') return finish('failed');
      await rt.runs.update(runId, { status: 'finalizing' });
      const result = await rt.withTraffic(traffic, () => mirrorDeletes(spec, ctx, job.data.force === true));
      if (result.refused !== undefined) {
        await rt.runs.update(runId, {
          status: 'failed',
          message: result.refused,
          finishedAt: new Date().toISOString(),
        });
        return finish('failed');
      }
      if (
        spec.incremental !== undefined &&
        current?.cursor !== undefined &&
        job.data.replayIds === undefined &&
        job.data.range === undefined
      ) {
        // Saved only now that every write the cursor covers is confirmed. A backfill
        // re-reads history and leaves the job's cursor where it was.
        await rt.runs.setCursor(spec.name, current.cursor);
      }
      if (job.data.replayIds !== undefined) await settleReplay(rt, runId, job.data.replayIds);
      const superseded = await supersedeDeadLetters(rt.deadLetters, ctx.plan, spec.name, runId);
      if (superseded > 0)
        log.info({ superseded }, 'older dead letters of rows that failed again were replaced');
      // The structure this mapping last worked with: the next run compares against it.
      await snapshots.save(spec.name, structure, spec.mappings);
      await rt.runs.update(runId, {
        status: 'completed',
        deleted: result.deleted,
        finishedAt: new Date().toISOString(),
      });
      return finish('completed');
    }

    /** Pull jobs write a worksheet out to a sink: no fan-out, the sink is the one writer. */
    async function runPullJob(spec: JobSpec, file: string): Promise<RunRecord | undefined> {
      await rt.runs.update(runId, {
        status: 'running',
        startedAt: record!.startedAt ?? new Date().toISOString(),
        mode: 'pull',
      });
      const source = await openSource(rt, spec, file, job.data, runId);
      const sink = createSink(spec.sink!, { env: rt.env, baseDir: path.dirname(file) });
      const progress = await rt.withTraffic(traffic, () =>
        pullRun(spec, source, sink, {
          onBatch: (p) => job.updateProgress({ read: p.read, written: p.written }),
        }),
      );
      await rt.runs.addWritten(runId, progress.written);
      if (spec.incremental !== undefined && progress.cursor !== undefined) {
        await rt.runs.setCursor(spec.name, JSON.stringify(progress.cursor));
      }
      await rt.runs.update(runId, {
        status: 'completed',
        read: progress.read,
        finishedAt: new Date().toISOString(),
      });
      return finish('completed');
    }

    async function addChunkJobs(
      parent: Job<RunJobData>,
      range: NonNullable<RunJobData['range']>,
    ): Promise<void> {
      const pieces = splitRange(range.from, range.to, range.chunks);
      await rt.runs.update(runId, { range: `${range.from}..${range.to} in ${pieces.length} chunks` });
      for (const [i, piece] of pieces.entries()) {
        await runQueue.add(
          'chunk',
          { runId, job: parent.data.job, trigger: parent.data.trigger, chunk: { no: i, ...piece } },
          {
            jobId: `${runId}-chunk${i}`,
            parent: { id: parent.id!, queue: parent.queueQualifiedName },
            attempts: 3,
            backoff: { type: 'exponential', delay: 2000 },
            removeOnComplete: true,
            ignoreDependencyOnFailure: true,
          },
        );
      }
    }

    /** Adds this process's requests for the run to its report, once. */
    async function flushTraffic(): Promise<void> {
      if (traffic.requests + traffic.retries === 0) return;
      const counted = { ...traffic };
      Object.assign(traffic, { requests: 0, throttled: 0, retries: 0 });
      await rt.runs.addTraffic(runId, counted);
    }

    async function finish(_status: string): Promise<RunRecord | undefined> {
      await flushTraffic();
      await rt.runs.releaseJob(job.data.job, runId);
      await rt.runs.dropRowState(runId);
      const final = await rt.runs.get(runId);
      const report = await rt.runs.report(runId);
      const level = final?.status === 'completed' ? 'info' : 'error';
      log[level]({ status: final?.status, message: final?.message, report }, 'run finished');
      return final;
    }
  }
}

/**
 * A worker that is stopping cancels its run and chunk jobs (BullMQ's abort signal):
 * they hand themselves back without being charged an attempt, and whichever worker
 * takes them next reads again (batch ids and row outcomes keep that exactly-once).
 */
async function handBackOnAbort<T>(
  job: Job,
  token: string | undefined,
  signal: AbortSignal | undefined,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (signal?.aborted !== true || err instanceof WaitingChildrenError) throw err;
    await job.moveToDelayed(Date.now(), token);
    throw new DelayedError();
  }
}

/**
 * Replayed dead letters leave the store once their row has an outcome: it landed, or
 * it failed again and the replay run holds a fresh entry with the new reason.
 */
async function settleReplay(rt: Runtime, runId: string, ids: string[]): Promise<void> {
  const outcomes = await rt.runs.getOutcomes(
    runId,
    ids.map((_, i) => i),
  );
  const settled = ids.filter((_, i) => {
    const o = outcomes.get(i);
    return o !== undefined && o !== 'pending';
  });
  await rt.deadLetters.remove(settled);
}
