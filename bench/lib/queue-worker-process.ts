/**
 * Child process of bench/throttled-shared.ts: one rowbridge worker process (a runtime and
 * its BullMQ workers), as `rowbridge worker` runs it, so that two of them share one
 * budget through Redis the way two deployed workers do.
 *
 *   node bench/lib/queue-worker-process.ts
 *
 * Prints `{pid}` when it is up, then waits for one stdin line
 * `{"cmd": "start", "env": {...}, "jobsDir": "...", "concurrency": 4}` (the settings go
 * through the pipe, not argv, because they hold the emulator's credentials) and answers
 * `{started: true}` once its BullMQ workers are connected; `{"cmd": "stats"}` answers what its
 * platform clients sent ({@link QueueWorkerStats}). Closes its workers and connections
 * when stdin closes (also when the parent dies).
 */
import pino from 'pino';
import { loadSettings } from '../../config/settings.ts';
import { createLogger } from '../../src/ground/logger.ts';
import { createWorkers } from '../../src/queue/create-workers.ts';
import type { Workers } from '../../src/queue/create-workers.ts';
import { createRuntime } from '../../src/cli/create-runtime.ts';
import type { Runtime } from '../../src/queue/runtime-types.ts';
import { serveJsonCommands } from './serve-json-commands.ts';

/** The `start` command. */
export interface QueueWorkerStart {
  cmd: 'start';
  env: NodeJS.ProcessEnv;
  jobsDir: string;
  concurrency: number;
}

/** Answer to `stats`: this process's platform traffic, all clients together. */
export interface QueueWorkerStats {
  requests: number;
  throttled: number;
}

let running: { rt: Runtime; workers: Workers } | undefined;

async function start(command: QueueWorkerStart): Promise<{ started: true }> {
  if (running !== undefined) throw new Error('this worker process was started already');
  const settings = loadSettings({ ROWBRIDGE_LOG_LEVEL: 'warn', ...command.env });
  const logger = createLogger({ level: settings.logLevel, destination: pino.destination(2) });
  const rt = createRuntime({ settings, env: command.env, logger, jobsDir: command.jobsDir });
  const workers = createWorkers(rt, { concurrency: command.concurrency, closeTimeoutMs: 10_000 });
  running = { rt, workers };
  // A deployed worker is up long before a run arrives: the bench's clock starts after this.
  await workers.runWorker.waitUntilReady();
  await workers.batchWorker.waitUntilReady();
  return { started: true };
}

await serveJsonCommands(
  { pid: process.pid },
  (command) => {
    const cmd = (command as { cmd?: unknown }).cmd;
    if (cmd === 'start') return start(command as QueueWorkerStart);
    if (cmd === 'stats') {
      const stats: QueueWorkerStats = { requests: 0, throttled: 0 };
      for (const client of running?.rt.clients().values() ?? []) {
        stats.requests += client.stats.requests;
        stats.throttled += client.stats.throttled;
      }
      return stats;
    }
    throw new Error(`unknown command ${JSON.stringify(cmd)}: the commands are "start" and "stats"`);
  },
  async () => {
    if (running === undefined) return;
    await running.workers.close();
    await running.rt.close();
  },
);
