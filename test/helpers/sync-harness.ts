import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { DestinationStream } from 'pino';
import { loadSettings } from '../../config/settings.ts';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import type { EmulatorHandle } from '../../src/emulator/start-emulator.ts';
import type { EmulatorOptions } from '../../src/emulator/options.ts';
import { createLogger } from '../../src/ground/logger.ts';
import { createWorkers } from '../../src/queue/create-workers.ts';
import type { Workers } from '../../src/queue/create-workers.ts';
import { enqueueRun } from '../../src/queue/enqueue-run.ts';
import type { EnqueueOptions } from '../../src/queue/enqueue-run.ts';
import { createRuntime } from '../../src/cli/create-runtime.ts';
import type { Runtime } from '../../src/queue/runtime-types.ts';
import { TERMINAL_STATUSES } from '../../src/sync/state/run-store.ts';
import type { RunRecord, RunReport } from '../../src/sync/state/run-store.ts';
import type { CreateWorksheetInput } from '../../src/api/types.ts';
import { recordRedisPattern } from './redis-prefixes.ts';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Deletes every key under a prefix (tests clean up after themselves). */
export async function deleteKeys(pattern: string): Promise<void> {
  recordRedisPattern(pattern);
  const redis = new Redis(REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.quit().catch(() => undefined);
  }
}

export interface Harness {
  emulator: EmulatorHandle;
  appId: string;
  env: NodeJS.ProcessEnv;
  dir: string;
  prefix: string;
  rt: Runtime;
  workers: Workers | undefined;
  startWorkers(concurrency?: number): Workers;
  createWorksheet(input: CreateWorksheetInput): string;
  writeFile(name: string, content: string): Promise<string>;
  writeJob(name: string, yaml: string): Promise<void>;
  runJob(name: string, options?: Partial<EnqueueOptions>): Promise<{ record: RunRecord; report: RunReport }>;
  waitForRun(runId: string, timeoutMs?: number): Promise<{ record: RunRecord; report: RunReport }>;
  close(): Promise<void>;
}

/**
 * An emulator with one application, a temporary jobs folder, and a rowbridge runtime
 * with its own queue prefix on the real Redis.
 */
export async function createHarness(
  name: string,
  emulatorOptions: EmulatorOptions = {},
  extraEnv: NodeJS.ProcessEnv = {},
  /** Where the runtime logs (at debug level); silent by default. */
  logDestination?: DestinationStream,
): Promise<Harness> {
  const emulator = await startEmulator(emulatorOptions);
  const app = emulator.createApp({ name: `app-${name}` });
  const dir = await mkdtemp(path.join(tmpdir(), `rowbridge-${name}-`));
  const prefix = `rbtest-${name}-${process.pid}`;
  recordRedisPattern(`${prefix}:*`);
  const env: NodeJS.ProcessEnv = {
    ROWBRIDGE_API_URL: emulator.url,
    ROWBRIDGE_APPKEY: app.appKey,
    ROWBRIDGE_SIGN: app.sign,
    ROWBRIDGE_HEADER_PREFIX: (emulator as { headerPrefix?: string }).headerPrefix ?? 'APP-',
    REDIS_URL,
    ROWBRIDGE_QUEUE_PREFIX: prefix,
    ROWBRIDGE_RATE: '400',
    ROWBRIDGE_MAX_RATE: '1000',
    ROWBRIDGE_MAX_CONCURRENT: '8',
    ROWBRIDGE_JOBS_DIR: dir,
    ...extraEnv,
  };
  const logger =
    logDestination === undefined
      ? createLogger({ level: process.env.ROWBRIDGE_TEST_LOG ?? 'silent' })
      : createLogger({ level: 'debug', destination: logDestination });
  const rt = createRuntime({ settings: loadSettings(env), env, logger, jobsDir: dir });
  const harness: Harness = {
    emulator,
    appId: app.appId,
    env,
    dir,
    prefix,
    rt,
    workers: undefined,
    startWorkers(concurrency = 4) {
      harness.workers ??= createWorkers(rt, { concurrency, closeTimeoutMs: 10_000 });
      return harness.workers;
    },
    createWorksheet(input) {
      return emulator.createWorksheet(app.appId, input).id;
    },
    async writeFile(file, content) {
      const full = path.join(dir, file);
      await writeFile(full, content);
      return full;
    },
    async writeJob(job, yaml) {
      await writeFile(path.join(dir, `${job}.yaml`), yaml);
    },
    async runJob(job, options = {}) {
      harness.startWorkers();
      const runId = await enqueueRun(rt, job, { trigger: 'cli', ...options });
      return harness.waitForRun(runId);
    },
    async waitForRun(runId, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const record = await rt.runs.get(runId);
        if (record !== undefined && TERMINAL_STATUSES.has(record.status)) {
          return { record, report: await rt.runs.report(runId) };
        }
        if (Date.now() > deadline)
          throw new Error(`run ${runId} not finished after ${timeoutMs} ms: ${JSON.stringify(record)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async close() {
      await harness.workers?.close();
      await rt.close();
      await emulator.close();
      await rm(dir, { recursive: true, force: true });
      await deleteKeys(`${prefix}:*`);
    },
  };
  return harness;
}
