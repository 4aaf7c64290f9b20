import pino from 'pino';
import { Redis } from 'ioredis';
import { loadSettings } from '../../config/settings.ts';
import { createLogger } from '../../src/ground/logger.ts';
import { createWorkers } from '../../src/queue/create-workers.ts';
import { createRuntime } from '../../src/cli/create-runtime.ts';
import { enqueueAndWait } from './run-enqueued-job.ts';
import type { RunRecord, RunReport } from '../../src/sync/state/run-store.ts';

/** What {@link runQueuedJob} needs: the rowbridge environment and the job to run. */
export interface QueuedJobOptions {
  /** Settings as rowbridge reads them (ROWBRIDGE_API_URL, credentials, ROWBRIDGE_QUEUE_PREFIX...). Its queue prefix must be unique to this run: every key under it is deleted afterwards. */
  env: NodeJS.ProcessEnv;
  jobsDir: string;
  jobName: string;
  /** Batch jobs processed at once by the worker. */
  concurrency: number;
  /** Give up (and fail) when the run has not ended after this long. */
  timeoutMs: number;
  /** Leave the keys under the queue prefix (for a next run); the caller deletes them. @defaultValue false */
  keepKeys?: boolean;
}

/** The ended run, its report, and the time from enqueue to the end being seen. */
export interface QueuedJobResult {
  record: RunRecord;
  report: RunReport;
  seconds: number;
}

async function deleteKeys(redis: Redis, pattern: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  return deleted;
}

/**
 * Runs a job through the real queue path, as test/helpers/sync-harness.ts does: a
 * runtime, workers in this process, `enqueueRun`, then `runs.get` every 100 ms until the
 * run is terminal. Logs go to stderr (level ROWBRIDGE_LOG_LEVEL, default warn). Workers,
 * connections and every Redis key under the queue prefix are gone when it settles.
 */
export async function runQueuedJob(options: QueuedJobOptions): Promise<QueuedJobResult> {
  const settings = loadSettings({ ROWBRIDGE_LOG_LEVEL: 'warn', ...options.env });
  const logger = createLogger({ level: settings.logLevel, destination: pino.destination(2) });
  const rt = createRuntime({ settings, env: options.env, logger, jobsDir: options.jobsDir });
  const workers = createWorkers(rt, { concurrency: options.concurrency, closeTimeoutMs: 10_000 });
  try {
    return await enqueueAndWait(rt, options.jobName, options.timeoutMs);
  } finally {
    await workers.close();
    await rt.close();
    if (options.keepKeys !== true) {
      const redis = new Redis(settings.redisUrl, { maxRetriesPerRequest: 3 });
      try {
        await deleteKeys(redis, `${settings.queuePrefix}:*`);
      } finally {
        await redis.quit().catch(() => undefined);
      }
    }
  }
}
