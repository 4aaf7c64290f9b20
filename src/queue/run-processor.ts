import { DelayedError, UnrecoverableError, WaitingChildrenError } from 'bullmq';
import type { Job, Queue } from 'bullmq';
import { policyOf } from '../ground/errors.ts';
import { createSyncContext } from '../sync/write/create-sync-context.ts';
import { createIndexAdoptions } from '../sync/state/index-adoption.ts';
import { createStructureSnapshots } from '../sync/prepare/schema-drift.ts';
import type { RunRecord } from '../sync/state/run-store.ts';
import { createChunkProcessor } from './chunk-processor.ts';
import { createHintRuns } from './hint-run.ts';
import { createHookInbox } from './hook-inbox.ts';
import type { BatchJobData, RunJobData } from './queues.ts';
import { notifyRunFinished } from './notify-run.ts';
import { runPullJob } from './pull-job.ts';
import { createRunClaims } from './run-claim.ts';
import { finalizeRun } from './run-finalize.ts';
import { createRunFinish } from './run-finish.ts';
import { readRun } from './run-read.ts';
import type { RunScope } from './run-scope.ts';
import type { Runtime, Traffic } from './runtime-types.ts';

/**
 * The run job: reads the source, maps it, fans out batch jobs as its children (so
 * workers on several machines share one run), then waits for them and finalizes.
 * Steps are kept in the job data, so a run whose worker died resumes where it was:
 * reading again re-adds the same batch job ids (BullMQ ignores duplicates, and rows
 * already written are skipped by their outcomes), finalizing is idempotent.
 *
 * A run that fails for good is recorded `failed`, stays resumable (its row outcomes
 * are kept for ROWBRIDGE_ROW_STATE_TTL_DAYS) and fails its queue job with BullMQ's
 * UnrecoverableError, so the queue and bull-board show it failed. So does a run whose
 * batch (or chunk) job failed every attempt with rows unwritten: it is never recorded
 * complete without them, and its resume reads them again (failed-children.ts).
 */
export function createRunProcessor(rt: Runtime, batches: Queue<BatchJobData>, runQueue: Queue<RunJobData>) {
  const queues = { runs: runQueue, batches };
  const processChunk = createChunkProcessor(rt, queues);
  const snapshots = createStructureSnapshots({ redis: rt.redis, prefix: rt.statePrefix });
  const adoptions = createIndexAdoptions({ redis: rt.redis, prefix: rt.statePrefix });
  const hints = createHintRuns(rt, createHookInbox({ redis: rt.redis, prefix: rt.statePrefix }), runQueue);
  const { claimRun, acquire } = createRunClaims(rt, runQueue);
  const notify = (jobName: string, runId: string) => notifyRunFinished(rt, jobName, runId);

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

  async function processRunJob(
    job: Job<RunJobData>,
    token?: string,
    signal?: AbortSignal,
  ): Promise<RunRecord | undefined> {
    const traffic: Traffic = { requests: 0, throttled: 0, retries: 0 };
    const claim = await claimRun(job);
    if (claim.kind === 'done') return claim.record;
    const { runId, record } = claim;
    traffic.run = { job: job.data.job, runId };
    const log = rt.logger.child({ job: job.data.job, runId });
    const scope: RunScope = { job, runId, log, traffic, signal };
    const { flushTraffic, finish } = createRunFinish({ runs: rt.runs, notify }, scope);

    const holder = await acquire(job.data.job, runId);
    // A hint run waits for the run ahead of it: its hints are not in that run.
    if (holder !== undefined && job.data.trigger === 'hook')
      return delay(job, token, await hints.retryDelayMs(job.data.job));
    if (holder === undefined && job.data.trigger === 'hook' && job.data.step !== 'finalize') {
      const gate = await hints.begin(job.data.job, runId);
      if (gate.go !== 'read') {
        await rt.runs.releaseJob(job.data.job, runId);
        if (gate.go === 'wait') return delay(job, token, gate.delayMs);
        await rt.runs.update(runId, {
          status: 'skipped',
          message: 'its hints were taken by an earlier run',
          finishedAt: new Date().toISOString(),
        });
        return rt.runs.get(runId);
      }
    }
    if (holder !== undefined) {
      await rt.runs.update(runId, {
        status: 'skipped',
        message: `run ${holder} of job ${job.data.job} is still active`,
        finishedAt: new Date().toISOString(),
      });
      return rt.runs.get(runId);
    }

    try {
      const run = await rt.withTraffic(traffic, () => rt.prepareRun(job.data.job, runId));
      if (run.spec.sink !== undefined) return await runPullJob(rt, scope, run, record, finish);
      if (run.spec.target?.mode === 'two-way') {
        // The two-way engine and its database clients load only for a two-way job.
        const { runTwoWayJob } = await import('./two-way-job.ts');
        await rt.withTraffic(traffic, () => runTwoWayJob(rt, run, runId, record.startedAt, log));
        return await finish();
      }
      const ctx = createSyncContext(
        run.spec,
        run.prepared!,
        { runId, attempt: job.attemptsMade + 1 },
        { ...rt.syncDeps(run.client, log), ...(job.data.full === true ? { full: true } : {}) },
      );
      if (job.data.step !== 'finalize') {
        await readRun({ rt, queues, hints, adoptions }, scope, run, ctx, record);
        await job.updateData({ ...job.data, runId, step: 'finalize' });
        if (token !== undefined && (await job.moveToWaitingChildren(token))) throw new WaitingChildrenError();
      }
      return await finalizeRun(
        {
          runs: rt.runs,
          deadLetters: rt.deadLetters,
          withTraffic: (t, fn) => rt.withTraffic(t, fn),
          queues,
          hints,
          snapshots,
          finish,
        },
        scope,
        ctx,
        run.spec,
        run.prepared!.structure,
      );
    } catch (err) {
      if (
        err instanceof WaitingChildrenError ||
        err instanceof DelayedError ||
        err instanceof UnrecoverableError ||
        signal?.aborted === true
      )
        throw err;
      const policy = policyOf(err);
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (!lastAttempt && policy.run === 'retry') throw err;
      // Deterministic (a missing file, a bad header, a 401) or out of attempts: the run
      // fails now and stays resumable; the queue job fails for good.
      const message = (err as Error).message;
      log.error({ err: { message, category: policy.category } }, 'run failed');
      await rt.runs.fail(runId, message);
      const code = (err as { code?: unknown }).code;
      await rt.runs.update(runId, {
        category: policy.category,
        ...(typeof code === 'string' ? { errorCode: code } : {}),
      });
      await finish();
      throw new UnrecoverableError(message);
    } finally {
      await flushTraffic();
    }
  }
}

/**
 * A worker that is stopping cancels its run and chunk jobs (BullMQ's abort signal):
 * they hand themselves back without being charged an attempt, and whichever worker
 * takes them next reads again (batch ids and row outcomes keep that exactly-once).
 * A job that has failed for good by then (UnrecoverableError: its run is recorded
 * failed) fails: `run` stops its workers as soon as it sees the run failed, which can be
 * a moment before the job's own failure reaches the queue, and the job was then handed
 * back (seen under the full test suite's load).
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
    if (signal?.aborted !== true || err instanceof WaitingChildrenError || err instanceof UnrecoverableError)
      throw err;
    await job.moveToDelayed(Date.now(), token);
    throw new DelayedError();
  }
}

/** Puts a run job back to be taken again in `delayMs`, without charging it an attempt. */
async function delay(job: Job<RunJobData>, token: string | undefined, delayMs: number): Promise<never> {
  await job.moveToDelayed(Date.now() + delayMs, token);
  throw new DelayedError();
}
