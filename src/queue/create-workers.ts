import { Worker } from 'bullmq';
import { createBatchProcessor } from './batch-processor.ts';
import { createQueues, BATCH_QUEUE, RUN_QUEUE } from './queues.ts';
import type { BatchJobData, RunJobData } from './queues.ts';
import { createRunProcessor } from './run-processor.ts';
import type { Runtime } from './runtime.ts';

export interface WorkerOptions {
  /** Batch jobs processed at once by this process. @defaultValue 4 */
  concurrency?: number;
  /** Run (orchestrator) jobs at once. @defaultValue 2 */
  runConcurrency?: number;
  /** Longest wait for in-flight jobs on close before giving up on them. @defaultValue 30_000 */
  closeTimeoutMs?: number;
}

export interface Workers {
  runWorker: Worker<RunJobData>;
  batchWorker: Worker<BatchJobData>;
  /**
   * Stops taking jobs and waits (bounded) for the ones in flight. A job still running
   * when the wait ends is left to BullMQ's stalled-job check, which hands it to another
   * worker: its rows are kept exactly-once by their recorded outcomes.
   */
  close(): Promise<void>;
}

export function createWorkers(rt: Runtime, options: WorkerOptions = {}): Workers {
  const queues = createQueues(rt);
  // A worker killed mid-job holds its lock until it expires; the stalled check then
  // hands the job to a live worker (rows stay exactly-once through their outcomes).
  const lockDuration = rt.settings.lockDurationMs;
  const common = {
    connection: rt.connection,
    prefix: rt.queuePrefix,
    maxStalledCount: 5,
    lockDuration,
    stalledInterval: lockDuration,
  };
  const runWorker = new Worker<RunJobData>(RUN_QUEUE, createRunProcessor(rt, queues.batches, queues.runs), {
    ...common,
    concurrency: options.runConcurrency ?? 2,
  });
  const batchWorker = new Worker<BatchJobData>(BATCH_QUEUE, createBatchProcessor(rt), {
    ...common,
    concurrency: options.concurrency ?? 4,
  });
  for (const w of [runWorker, batchWorker]) {
    w.on('error', (err) => rt.logger.error({ err }, `worker ${w.name}`));
    w.on('failed', (job, err) => rt.logger.warn({ err, jobId: job?.id }, `${w.name} job failed`));
  }
  const timeout = options.closeTimeoutMs ?? 30_000;
  return {
    runWorker,
    batchWorker,
    async close() {
      // Run and chunk jobs may read a source for a long time: they hand back at once.
      runWorker.cancelAllJobs('worker stopping');
      const graceful = Promise.all([batchWorker.close(), runWorker.close()]);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), timeout);
      });
      if ((await Promise.race([graceful, late])) === 'late') {
        rt.logger.warn({ timeoutMs: timeout }, 'workers did not finish in time; closing anyway');
        await Promise.all([batchWorker.close(true), runWorker.close(true)]);
      }
      clearTimeout(timer);
      await queues.close();
    },
  };
}
