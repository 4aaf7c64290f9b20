/**
 * Which run a run job works on, and whether it may: a job has one active run at a time.
 * Apart from the processor because it is the one place that decides a run's ownership.
 */
import { UnrecoverableError } from 'bullmq';
import type { Job, Queue } from 'bullmq';
import type { Settings } from '../../config/settings.ts';
import type { RunRecord } from '../sync/state/run-store.ts';
import { hasRunWorkers } from './has-run-workers.ts';
import type { QueueConnection, RunJobData } from './queues.ts';
import { requeueRun } from './resume-run.ts';
import type { ResumeRunDeps } from './resume-run.ts';
import { newRunId } from './run-id.ts';

/** Why a run job ended without finishing its run. */
export type Claim =
  { kind: 'run'; runId: string; record: RunRecord } | { kind: 'done'; record: RunRecord | undefined };

/** What claiming a run reads: the run store and where the queues live. */
export interface RunClaimRuntime extends QueueConnection, ResumeRunDeps {
  settings: Pick<Settings, 'queuePrefix'>;
}

/** Claims a queue job's run (`claimRun`) and the job's one active run slot (`acquire`). */
export interface RunClaims {
  claimRun: (job: Job<RunJobData>) => Promise<Claim>;
  acquire: (jobName: string, runId: string) => Promise<string | undefined>;
}

/** Run claims over the run store and the run queue. */
export function createRunClaims(rt: RunClaimRuntime, runQueue: Queue<RunJobData>): RunClaims {
  return { claimRun, acquire };

  /** Whether a run holding the job lock has no live queue job any more. */
  async function isAbandoned(holder: string): Promise<boolean> {
    const held = await rt.runs.get(holder);
    if (held?.queueJobId === undefined) return false;
    // A run of `run JOB` lives in that command's own queues: lost only when nobody listens there.
    const queues = held.queues ?? rt.settings.queuePrefix;
    if (queues !== rt.queuePrefix) return !(await hasRunWorkers(rt, queues));
    const queued = await runQueue.getJob(held.queueJobId);
    if (queued === undefined) return true;
    const state = await queued.getState();
    return state === 'failed' || state === 'completed' || state === 'unknown';
  }

  /**
   * The run this queue job works on. A scheduled job (no run id) resumes the job's
   * failed run when there is one, by putting that run's own queue job back, so one run
   * never has two parents for its batches.
   */
  async function claimRun(job: Job<RunJobData>): Promise<Claim> {
    let runId = job.data.runId;
    if (runId === undefined) {
      const resumable = await rt.runs.resumableRun(job.data.job);
      const failed = resumable === undefined ? undefined : await rt.runs.get(resumable);
      if (failed?.status === 'failed') {
        rt.logger.info({ job: job.data.job, runId: failed.runId }, 'a scheduled run resumes the failed run');
        await requeueRun(rt, runQueue, failed);
        return { kind: 'done', record: undefined };
      }
      runId = newRunId(job.data.job);
      await job.updateData({ ...job.data, runId });
    }
    const record =
      (await rt.runs.get(runId)) ??
      (await rt.runs.create({ runId, job: job.data.job, trigger: job.data.trigger }));
    if (record.status === 'completed' || record.status === 'unmet' || record.status === 'skipped')
      return { kind: 'done', record };
    if (record.status === 'failed') {
      // A batch stopped the run while this job waited for it: the job fails too, and
      // the run stays resumable for the next `run JOB`.
      await rt.runs.releaseJob(job.data.job, runId);
      throw new UnrecoverableError(record.message ?? 'the run was stopped');
    }
    if (record.queueJobId !== job.id && job.id !== undefined)
      await rt.runs.update(runId, { queueJobId: job.id });
    return { kind: 'run', runId, record };
  }

  /** One active run per job; a holder whose queue job ended without it is released. */
  async function acquire(jobName: string, runId: string): Promise<string | undefined> {
    let holder = await rt.runs.acquireJob(jobName, runId);
    if (holder !== undefined && (await isAbandoned(holder))) {
      // BullMQ gave up on that run's job (stalled too often, or removed) without our
      // code running: the run can never finish, so it must not block the job forever.
      await rt.runs.fail(
        holder,
        'its queue job ended without finishing the run (the worker was lost too often)',
      );
      holder = await rt.runs.acquireJob(jobName, runId);
    }
    return holder;
  }
}
