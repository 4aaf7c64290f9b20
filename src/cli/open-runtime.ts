import path from 'node:path';
import { createRequire } from 'node:module';
import type PinoPretty from 'pino-pretty';
import type { ClientEvent } from '../api/create-api-client.ts';
import { loadSettings } from '../../config/settings.ts';
import { createLogger } from '../ground/logger.ts';
import type { DestinationStream } from 'pino';
import { createRuntime } from './create-runtime.ts';
import type { Runtime } from '../queue/runtime-types.ts';
import type { CliIo } from './io.ts';
import { reportFailure } from './report-failure.ts';
import { ensureRedisReachable } from './redis-reachable.ts';

/**
 * Where a command's logs go: stderr (stdout carries the command's output). On a
 * terminal each line is drawn readable by pino-pretty; elsewhere (pipes, CI, tests) and
 * with --json they stay pino's JSON, one object a line, for machines.
 */
function logDestination(io: CliIo, json: boolean, reported?: ReadonlySet<string>): DestinationStream {
  if (io.errIsTty !== true || json) return process.stderr;
  // Loaded on a terminal only: a worker or a piped command never pays for it.
  const pinoPretty = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  const pretty = pinoPretty.prettyFactory({
    colorize: true,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,service',
  });
  // Written synchronously, after clearing the line: a progress bar being redrawn on it
  // (no newline yet) is wiped rather than glued to the log line, and redrawn below it.
  return {
    write: (line: string) => {
      if (reported !== undefined && reported.size > 0 && isReportedFailure(line, reported)) return;
      process.stderr.write(`\r\u001b[2K${pretty(line)}`);
    },
  };
}

/** pino's `warn` and `error` levels. */
const WARN_LEVEL = 40;
const ERROR_LEVEL = 50;

/**
 * An error line about a run the command reports itself (its failure, with a hint): on
 * a terminal the person reads it once, from the command, not again inside log objects.
 */
function isReportedFailure(line: string, reported: ReadonlySet<string>): boolean {
  try {
    const { level, runId, jobId, msg } = JSON.parse(line) as Record<string, unknown>;
    if (typeof level !== 'number') return false;
    if (level >= ERROR_LEVEL && typeof runId === 'string' && reported.has(runId)) return true;
    // A queue job of the run failing an attempt (it is retried): the same error again.
    if (level < WARN_LEVEL || typeof jobId !== 'string' || typeof msg !== 'string') return false;
    if (!msg.endsWith('job failed')) return false;
    for (const id of reported) if (jobId === id || jobId.startsWith(`${id}-`)) return true;
    return false;
  } catch {
    return false;
  }
}

/**
 * The runtime of a CLI command. Logs go to stderr (stdout carries the command's
 * output, e.g. --json) at the configured level.
 */
export function openRuntime(
  io: CliIo,
  options: {
    quiet?: boolean;
    /** The command prints JSON (--json): its logs stay JSON too, even on a terminal. */
    json?: boolean;
    /** Draws a progress bar on a terminal: log lines would tear it, so only warnings show there. */
    interactive?: boolean;
    /**
     * Runs whose failure the command prints itself (added as they start): on a terminal
     * their error log lines are left out.
     */
    reportedRuns?: ReadonlySet<string>;
    jobsDir?: string;
    onClientEvent?: (event: ClientEvent) => void;
    /** Sees the row outcomes each batch newly records (live metrics). */
    onRowOutcomes?: (moved: Readonly<Record<string, number>>) => void;
  } = {},
): Runtime {
  const settings = loadSettings(io.env);
  const logger = createLogger({
    level:
      options.quiet === true ||
      (options.interactive === true && io.isTty && io.env.ROWBRIDGE_LOG_LEVEL === undefined)
        ? 'warn'
        : settings.logLevel,
    redactHeaders: [`${settings.headerPrefix}Sign`, `${settings.headerPrefix}Appkey`],
    destination: logDestination(io, options.json === true, options.reportedRuns),
  });
  return createRuntime({
    settings,
    env: io.env,
    logger,
    jobsDir: options.jobsDir ?? settings.jobsDir ?? path.join(io.cwd, 'jobs'),
    ...(options.onClientEvent === undefined ? {} : { onClientEvent: options.onClientEvent }),
    ...(options.onRowOutcomes === undefined ? {} : { onRowOutcomes: options.onRowOutcomes }),
  });
}

/**
 * {@link openRuntime} once Redis has answered: when nothing answers at REDIS_URL it
 * throws a RedisUnreachableError (one line: `cannot reach Redis at host:port
 * (REDIS_URL)`) instead of letting every command retry into a stack trace.
 */
export async function openReachableRuntime(
  io: CliIo,
  options: Parameters<typeof openRuntime>[1] = {},
): Promise<Runtime> {
  await ensureRedisReachable(loadSettings(io.env).redisUrl);
  return openRuntime(io, options);
}

/**
 * Runs `use` with a reachable runtime and closes it afterwards; any failure (Redis
 * unreachable included) is printed as one message and becomes the exit code.
 */
export async function withRuntime(
  io: CliIo,
  options: Parameters<typeof openRuntime>[1],
  use: (rt: Runtime) => Promise<number>,
): Promise<number> {
  let rt: Runtime;
  try {
    rt = await openReachableRuntime(io, options);
  } catch (err) {
    return reportFailure(err, io);
  }
  try {
    return await use(rt);
  } catch (err) {
    return reportFailure(err, io);
  } finally {
    await rt.close();
  }
}

/** A job given as a name (`orders`) or as a path to its file (`jobs/orders.yaml`). */
export function resolveJobArg(arg: string, io: CliIo): { name: string; jobsDir?: string } {
  if (/\.ya?ml$/.test(arg)) {
    const file = path.resolve(io.cwd, arg);
    return { name: path.basename(file).replace(/\.ya?ml$/, ''), jobsDir: path.dirname(file) };
  }
  return { name: arg };
}
