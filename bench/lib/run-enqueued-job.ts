import pino from 'pino';
import { Redis } from 'ioredis';
import { loadSettings } from '../../config/settings.ts';
import { createLogger } from '../../src/ground/logger.ts';
import { enqueueRun } from '../../src/queue/enqueue-run.ts';
import { createRuntime } from '../../src/cli/create-runtime.ts';
import type { Runtime } from '../../src/queue/runtime-types.ts';
import { TERMINAL_STATUSES } from '../../src/sync/state/run-store.ts';
import type { RunRecord, RunReport } from '../../src/sync/state/run-store.ts';

/** What {@link runEnqueuedJob} needs. Workers elsewhere (other processes) must serve the queue. */
export interface EnqueuedJobOptions {
  /** Settings as rowbridge reads them; the same ROWBRIDGE_QUEUE_PREFIX as the workers'. */
  env: NodeJS.ProcessEnv;
  jobsDir: string;
  jobName: string;
  /** Give up (and fail) when the run has not ended after this long. */
  timeoutMs: number;
}

/** The ended run, its report, and the time from enqueue to the end being seen. */
export interface EnqueuedJobResult {
  record: RunRecord;
  report: RunReport;
  seconds: number;
}

/**
 * Enqueues a run for workers in other processes (bench/lib/queue-worker-process.ts) and
 * reads the run every 100 ms until it is terminal. Runs no worker itself; its own
 * connections are closed when it settles. Keys are left for {@link deleteQueueKeys},
 * to be called once the workers are gone.
 */
export async function runEnqueuedJob(options: EnqueuedJobOptions): Promise<EnqueuedJobResult> {
  const settings = loadSettings({ ROWBRIDGE_LOG_LEVEL: 'warn', ...options.env });
  const logger = createLogger({ level: settings.logLevel, destination: pino.destination(2) });
  const rt = createRuntime({ settings, env: options.env, logger, jobsDir: options.jobsDir });
  try {
    return await enqueueAndWait(rt, options.jobName, options.timeoutMs);
  } finally {
    await rt.close();
  }
}

/** Deletes every Redis key under the queue prefix of `env` (a bench's fresh prefix). */
export async function deleteQueueKeys(env: NodeJS.ProcessEnv): Promise<number> {
  const settings = loadSettings({ ROWBRIDGE_LOG_LEVEL: 'warn', ...env });
  const redis = new Redis(settings.redisUrl, { maxRetriesPerRequest: 3 });
  try {
    let cursor = '0';
    let deleted = 0;
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${settings.queuePrefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== '0');
    return deleted;
  } finally {
    await redis.quit().catch(() => undefined);
  }
}

/** Enqueues a run of `jobName` and waits (polling) until it ends, or throws after `timeoutMs`. */
export async function enqueueAndWait(
  rt: Runtime,
  jobName: string,
  timeoutMs: number,
): Promise<EnqueuedJobResult> {
  const started = performance.now();
  const runId = await enqueueRun(rt, jobName, { trigger: 'cli' });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const record = await rt.runs.get(runId);
    if (record !== undefined && TERMINAL_STATUSES.has(record.status)) {
      const seconds = (performance.now() - started) / 1000;
      return { record, report: await rt.runs.report(runId), seconds };
    }
    if (Date.now() > deadline) {
      throw new Error(
        `run ${runId} of job ${jobName} did not end within ${timeoutMs} ms: ${JSON.stringify(record)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
