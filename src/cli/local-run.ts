/**
 * Where `run JOB` keeps its run: queues of its own (a BullMQ prefix under the shared
 * one, per job), which no `rowbridge worker` listens to. The run and its batches are
 * then worked by this process only, with this process's environment: a laptop's
 * credentials never meet a worker's, and a worker's never write a `run`'s rows.
 */
import { JobBusyError } from './job-busy-error.ts';
import { ConfigError } from '../ground/errors.ts';
import { enqueueRun } from '../queue/enqueue-run.ts';
import { createQueues } from '../queue/queues.ts';
import { hasRunWorkers } from '../queue/has-run-workers.ts';
import type { Queue } from 'bullmq';
import type { RunJobData } from '../queue/queues.ts';
import {
  abandonRun,
  findUnfinishedRun,
  requeueRun,
  RUN_JOB_OPTIONS,
  takeOverOrphans,
} from '../queue/resume-run.ts';
import type { RunFlags } from '../queue/resume-run.ts';
import type { Runtime } from '../queue/runtime-types.ts';
import type { RunRecord } from '../sync/state/run-store.ts';
import { TERMINAL_STATUSES } from '../sync/state/run-store.ts';

/** The BullMQ prefix of the queues `run JOB` works its runs of that job in. */
export function localQueuePrefix(sharedPrefix: string, job: string): string {
  return `${sharedPrefix}:run:${job}`;
}

/**
 * A failed run of the workers' queues (enqueued, scheduled, a backfill), resumed by
 * `run JOB`: its run job moves to this command's queues with its data (a backfill keeps
 * its range and its cut), and leaves the shared ones with its failed batch and chunk
 * jobs, so no worker ever works a piece of it again. It reads again from the start;
 * rows already written are skipped by their recorded outcomes.
 */
async function adoptFailedRun(
  local: Runtime,
  runQueue: Queue<RunJobData>,
  record: RunRecord,
  flags: RunFlags,
): Promise<void> {
  const shared = createQueues({ ...local, queuePrefix: local.settings.queuePrefix });
  const queueJobId = record.queueJobId ?? record.runId;
  let data: RunJobData = { runId: record.runId, job: record.job, trigger: 'cli' };
  try {
    const old = await shared.runs.getJob(queueJobId);
    if (old !== undefined) {
      data = { ...old.data, runId: record.runId };
      // Its children (failed batch jobs, chunk jobs) go with it.
      await old.remove();
    }
  } finally {
    await shared.close();
  }
  await local.runs.reopen(record.runId);
  await local.runSnapshots.drop(record.runId);
  const { step: _step, ...rest } = data;
  await runQueue.add('run', { ...rest, step: 'read', ...flags }, { jobId: queueJobId, ...RUN_JOB_OPTIONS });
}

/** What `run JOB` works: its run id, and the unfinished run it resumes, as it was found. */
export interface LocalRun {
  runId: string;
  resumed?: RunRecord;
}

/**
 * Starts `run JOB` in this process's queues (`local`, a runtime whose queuePrefix is
 * {@link localQueuePrefix}): resumes the job's unfinished run when it is this command's
 * to resume, gives it up with `fresh`, else records and queues a new one. Throws a
 * {@link JobBusyError} when another process works the job's run.
 */
export async function startLocalRun(
  local: Runtime,
  job: string,
  options: RunFlags & { fresh?: boolean; resetCursor?: boolean; command: string },
): Promise<LocalRun> {
  const { fresh, resetCursor, command, ...flags } = options;
  const shared = local.settings.queuePrefix;
  const unfinished = await findUnfinishedRun(local, job);
  if (unfinished !== undefined && fresh !== true && resetCursor === true) {
    // Resuming reads on from where that run started; giving it up is the user's call.
    throw new ConfigError(
      `job ${job}: run ${unfinished.runId} did not finish (${unfinished.status}) and would be resumed, not read from the beginning: ` +
        `add --fresh to give it up and start anew with --reset-cursor, or run \`${command} run ${job}\` to finish it first`,
    );
  }
  if (unfinished !== undefined && fresh !== true) {
    const queues = unfinished.queues ?? shared;
    const running = !TERMINAL_STATUSES.has(unfinished.status);
    if (queues !== local.queuePrefix) {
      if (running && (await hasRunWorkers(local, queues))) {
        throw new JobBusyError(
          `a worker is working job ${job}: run ${unfinished.runId} (${unfinished.status}); ` +
            `\`${command} run\` never takes over a worker's run; see \`${command} status ${unfinished.runId}\``,
        );
      }
      if (running) {
        throw new JobBusyError(
          `run ${unfinished.runId} of job ${job} (${unfinished.status}) is queued for the workers, and none is up: ` +
            `start \`${command} worker\` to finish it, or \`${command} run ${job} --fresh\` to give it up and run here`,
        );
      }
    } else if (running && (await hasRunWorkers(local, queues))) {
      throw new JobBusyError(
        `another \`${command} run ${job}\` is working run ${unfinished.runId}; see \`${command} status ${unfinished.runId}\``,
      );
    }
    const q = createQueues(local);
    try {
      if (queues !== local.queuePrefix) await adoptFailedRun(local, q.runs, unfinished, flags);
      else if (unfinished.status === 'failed') await requeueRun(local, q.runs, unfinished, flags);
      else await takeOverOrphans(q);
    } finally {
      await q.close();
    }
    await local.runs.update(unfinished.runId, { queues: local.queuePrefix });
    return { runId: unfinished.runId, resumed: unfinished };
  }
  if (unfinished !== undefined) await abandonRun(local, unfinished);
  const runId = await enqueueRun(local, job, {
    trigger: 'cli',
    ...flags,
    ...(resetCursor === true ? { resetCursor: true } : {}),
  });
  // Said before any process can take the run (none listens yet): workers judging the
  // job's lock look for its queue job here, not in theirs.
  await local.runs.update(runId, { queues: local.queuePrefix });
  return { runId };
}
