import { DelayedError, Worker } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { withJobSpan } from './job-span.ts';
import type { Job } from 'bullmq';
import { createRepeatGate } from '../ground/repeat-gate.ts';
import { checkStateVersion } from '../sync/state/state-version.ts';
import { createQueues, BATCH_QUEUE, RUN_QUEUE } from './queues.ts';
import type { BatchJobData, RunJobData } from './queues.ts';
import type { Runtime } from './runtime-types.ts';

export interface WorkerOptions {
  /** Batch jobs processed at once by this process. @defaultValue 4 */
  concurrency?: number;
  /** Run (orchestrator) jobs at once. @defaultValue 2 */
  runConcurrency?: number;
  /** Longest wait for in-flight jobs on close before giving up on them. @defaultValue ROWBRIDGE_SHUTDOWN_TIMEOUT_MS */
  closeTimeoutMs?: number;
  /**
   * Work these runs only (`run JOB`, `dlq replay`): a job of another run, or a scheduled one, is handed
   * back at once, uncharged, for the workers (`rowbridge worker`) to take.
   */
  onlyRuns?: ReadonlySet<string>;
}

/** How long a job of another run is put aside before anyone may take it again. */
const HAND_BACK_DELAY_MS = 2_000;

/** Wraps a processor so that jobs of other runs are handed back, not worked. */
function onlyFor<D extends { runId?: string }, R>(
  runIds: ReadonlySet<string> | undefined,
  processor: (job: Job<D>, token?: string, signal?: AbortSignal) => Promise<R>,
): (job: Job<D>, token?: string, signal?: AbortSignal) => Promise<R> {
  if (runIds === undefined) return processor;
  return async (job, token, signal) => {
    if (job.data.runId !== undefined && runIds.has(job.data.runId)) return processor(job, token, signal);
    await job.moveToDelayed(Date.now() + HAND_BACK_DELAY_MS, token);
    throw new DelayedError();
  };
}

type Processor<D, R> = (job: Job<D>, token?: string, signal?: AbortSignal) => Promise<R>;

/**
 * A processor whose module is imported when the first job comes. The processors bring
 * the sync engine (job specs with zod and yaml, sources, sinks, mapping): a worker that
 * waits for work does not hold it (about 13 MB of an idle worker's memory).
 */
function importedOnFirstJob<D, R>(load: () => Promise<Processor<D, R>>): Processor<D, R> {
  let processor: Promise<Processor<D, R>> | undefined;
  return async (job, token, signal) => (await (processor ??= load()))(job, token, signal);
}

export interface Workers {
  runWorker: Worker<RunJobData>;
  batchWorker: Worker<BatchJobData>;
  /**
   * Settles once the workers take jobs: after the Redis's state version is checked (and
   * stamped when it has none). Rejects with a `StateVersionError` when the Redis holds
   * another version's state: the workers then never take a job.
   */
  ready: Promise<void>;
  /**
   * Stops taking jobs and waits (bounded) for the ones in flight. A job still running
   * when the wait ends is left to BullMQ's stalled-job check, which hands it to another
   * worker: its rows are kept exactly-once by their recorded outcomes.
   */
  close(timeoutMs?: number): Promise<void>;
}

export function createWorkers(rt: Runtime, options: WorkerOptions = {}): Workers {
  const queues = createQueues(rt);
  // Told apart on the spans of a run's trace, several sets of workers per process included.
  const worker = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  // A worker killed mid-job holds its lock until it expires; the stalled check then
  // hands the job to a live worker (rows stay exactly-once through their outcomes).
  const lockDuration = rt.settings.lockDurationMs;
  const common = {
    connection: rt.connection,
    prefix: rt.queuePrefix,
    maxStalledCount: 5,
    lockDuration,
    stalledInterval: lockDuration,
    // Started by `ready`, once the state version is checked.
    autorun: false,
  };
  const runWorker = new Worker<RunJobData>(
    RUN_QUEUE,
    onlyFor(
      options.onlyRuns,
      withJobSpan(
        'run',
        worker,
        importedOnFirstJob(async () =>
          (await import('./run-processor.ts')).createRunProcessor(rt, queues.batches, queues.runs),
        ),
      ),
    ),
    {
      ...common,
      concurrency: options.runConcurrency ?? 2,
    },
  );
  const batchWorker = new Worker<BatchJobData>(
    BATCH_QUEUE,
    onlyFor(
      options.onlyRuns,
      withJobSpan(
        'batch',
        worker,
        importedOnFirstJob(async () => (await import('./batch-processor.ts')).createBatchProcessor(rt)),
      ),
    ),
    {
      ...common,
      concurrency: options.concurrency ?? 4,
    },
  );
  for (const w of [runWorker, batchWorker]) {
    const errors = createRepeatGate(10_000);
    w.on('error', (err) => {
      // While Redis is away every poll fails alike: one line per ten seconds, no stack.
      if (errors(err.message))
        rt.logger.error({ err: { message: err.message, name: err.name } }, `worker ${w.name}`);
    });
    w.on('failed', (job, err) => {
      // A run that failed for good was logged once with its reason: no stack again.
      if (err.name === 'UnrecoverableError') return;
      rt.logger.warn(
        { err: { message: err.message, name: err.name }, jobId: job?.id },
        `${w.name} job failed`,
      );
    });
  }
  // The one check of the state version: every job a worker takes comes after it.
  const ready = checkStateVersion(rt.redis, rt.statePrefix).then(() => {
    for (const w of [runWorker, batchWorker])
      w.run().catch((err: unknown) => w.emit('error', err instanceof Error ? err : new Error(String(err))));
  });
  // A caller that does not wait for `ready` still hears of a refusal.
  ready.catch((err: unknown) =>
    rt.logger.error({ err: { message: (err as Error).message } }, 'workers not started'),
  );
  const timeout = options.closeTimeoutMs ?? rt.settings.shutdownTimeoutMs;
  return {
    runWorker,
    batchWorker,
    ready,
    async close(closeTimeoutMs = timeout) {
      // Run and chunk jobs may read a source for a long time: they hand back at once.
      runWorker.cancelAllJobs('worker stopping');
      const graceful = Promise.all([batchWorker.close(), runWorker.close()]);
      if ((await within(graceful, closeTimeoutMs)) === 'late') {
        rt.logger.warn(
          { timeoutMs: closeTimeoutMs },
          'workers did not finish in time; leaving their jobs to the next worker',
        );
        // close(true) stops waiting for jobs, but a job stuck in its own code never
        // returns: bounded too. The caller exits the process; what was left is taken
        // over by the next run or worker (resume-run.ts), exactly once by row outcomes.
        await within(Promise.all([batchWorker.close(true), runWorker.close(true)]), 1_000);
      }
      await within(queues.close(), 1_000);
    },
  };
}

/** Waits for `work` at most `ms`: 'late' when it did not settle in time (it goes on unobserved). */
async function within(work: Promise<unknown>, ms: number): Promise<'done' | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  const done = work.then(() => 'done' as const);
  // A failure after the deadline has nobody left to tell: not an unhandled rejection.
  done.catch(() => undefined);
  try {
    return await Promise.race([done, late]);
  } finally {
    clearTimeout(timer);
  }
}
