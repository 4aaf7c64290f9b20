import type { Queue } from 'bullmq';
import { TERMINAL_STATUSES } from '../sync/state/run-store.ts';
import type { RunRecord, RunStore } from '../sync/state/run-store.ts';
import type { RunSnapshots } from '../sync/state/run-snapshots.ts';
import type { BatchJobData, RunJobData } from './queues.ts';

/** Queue options of every run job (enqueue-run.ts adds new ones with them). */
export const RUN_JOB_OPTIONS = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 2000 },
  removeOnComplete: 1000,
  removeOnFail: { age: 7 * 86_400, count: 1000 },
} as const;

/** What finding, requeueing and abandoning a run read and write. */
export interface ResumeRunDeps {
  runs: RunStore;
  /** What each run started with: a requeued run starts from the spec as it is now. */
  runSnapshots: RunSnapshots;
}

/** Flags a command passes to the run it starts or resumes. */
export type RunFlags = Pick<RunJobData, 'force' | 'full'>;

/**
 * The job's run that did not finish: the one holding the job's lock (its process died,
 * it was interrupted, or it is still going), else the one that failed and was kept
 * resumable. Undefined when the job's last run finished.
 */
export async function findUnfinishedRun(
  rt: Pick<ResumeRunDeps, 'runs'>,
  job: string,
): Promise<RunRecord | undefined> {
  const holder = await rt.runs.activeRun(job);
  const held = holder === undefined ? undefined : await rt.runs.get(holder);
  if (held !== undefined && !TERMINAL_STATUSES.has(held.status)) return held;
  const resumable = await rt.runs.resumableRun(job);
  const failed = resumable === undefined ? undefined : await rt.runs.get(resumable);
  return failed?.status === 'failed' ? failed : undefined;
}

/**
 * Puts a failed (or lost) run back in the queue under its own run id and its own queue
 * job, so its batch jobs keep their ids and parent and its row outcomes skip the rows
 * already written. The snapshot goes: the fix may be in the job spec.
 */
export async function requeueRun(
  rt: ResumeRunDeps,
  runQueue: Queue<RunJobData>,
  record: RunRecord,
  flags: RunFlags = {},
): Promise<void> {
  await rt.runs.reopen(record.runId);
  await rt.runSnapshots.drop(record.runId);
  const queueJobId = record.queueJobId ?? record.runId;
  const queued = await runQueue.getJob(queueJobId);
  const state = queued === undefined ? 'missing' : await queued.getState();
  if (queued !== undefined && (state === 'failed' || state === 'completed')) {
    await queued.updateData({ ...queued.data, runId: record.runId, step: 'read', ...flags });
    await queued.retry(state, { resetAttemptsMade: true, resetAttemptsStarted: true });
    return;
  }
  if (queued !== undefined && state !== 'unknown') {
    // Still waiting, delayed, held, or waiting for its batches (a batch stopped the
    // run): it runs again and reads from the start, since batches of the stopped run
    // wrote nothing after the stop; rows already written are skipped by their outcomes.
    await queued.updateData({ ...queued.data, runId: record.runId, step: 'read', ...flags });
    return;
  }
  await runQueue.add(
    'run',
    { runId: record.runId, job: record.job, trigger: 'cli', ...flags },
    { jobId: queueJobId, ...RUN_JOB_OPTIONS },
  );
}

/**
 * A process killed with SIGKILL leaves its jobs active under a lock that expires only
 * after ROWBRIDGE_LOCK_DURATION_MS, and BullMQ's stalled check needs two more passes.
 * When no worker of these queues is alive anywhere (the dead one's connections are
 * gone from Redis at once), nobody can be working those jobs: they are moved back to
 * be taken at once, not charged an attempt. With live workers, their stalled check
 * does it. Returns how many jobs were taken over.
 */
export async function takeOverOrphans(queues: {
  runs: Queue<RunJobData>;
  batches: Queue<BatchJobData>;
}): Promise<number> {
  const all = [queues.runs, queues.batches] as Queue[];
  try {
    const workers = await Promise.all(all.map((q) => q.getWorkers()));
    if (workers.some((w) => w.length > 0)) return 0;
  } catch {
    // CLIENT LIST refused (some managed Redis): leave it to the stalled check.
    return 0;
  }
  let moved = 0;
  for (const queue of all) {
    for (const job of await queue.getActive()) {
      // Token '0' skips BullMQ's lock check: the lock belongs to a process that is gone.
      await job.moveToDelayed(Date.now(), '0').then(
        () => (moved += 1),
        () => undefined,
      );
    }
  }
  return moved;
}

/**
 * `run JOB --fresh`: the unfinished run is given up on purpose. It is recorded failed
 * with why, its lock and row bookkeeping go, and its queued batches find it finished
 * and write nothing.
 */
export async function abandonRun(rt: Pick<ResumeRunDeps, 'runs'>, record: RunRecord): Promise<void> {
  if (!TERMINAL_STATUSES.has(record.status))
    await rt.runs.fail(record.runId, 'abandoned: `run --fresh` started anew');
  await rt.runs.releaseJob(record.job, record.runId);
  const resumable = await rt.runs.takeResumable(record.job);
  await rt.runs.dropRowState(record.runId);
  if (resumable !== undefined && resumable !== record.runId) await rt.runs.dropRowState(resumable);
}
