import { loadSettings } from '../../config/settings.ts';
import { ApiError, ConfigError, RowbridgeError } from '../ground/errors.ts';
import { redisAddress } from '../ground/redis-address.ts';
import { JobSpecError } from '../sync/job-spec/job-spec-error.ts';
import { BackfillRangeError } from '../sync/read/split-range.ts';
import { UsageError } from './args.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { isRedisOutage } from '../ground/redis-outage.ts';
import { RedisUnreachableError } from './redis-reachable.ts';
import { RunInterruptedError } from './run-interrupted-error.ts';
import { JobBusyError } from './job-busy-error.ts';

/** The first error in the cause chain that carries a socket address (a refused or timed-out connect). */
function socketAddress(err: unknown): { host: string; port?: number } | undefined {
  for (let e = err; typeof e === 'object' && e !== null; e = (e as { cause?: unknown }).cause) {
    const { address, hostname, port } = e as { address?: unknown; hostname?: unknown; port?: unknown };
    const host = typeof address === 'string' ? address : typeof hostname === 'string' ? hostname : undefined;
    if (host !== undefined) return { host, ...(typeof port === 'number' ? { port } : {}) };
  }
  return undefined;
}

function hostPort(url: string): string | undefined {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    return undefined;
  }
}

/**
 * `cannot reach the platform at host:port (VARIABLE)`: the variable is the `*_API_URL`
 * whose address the failed connection went to (a job may write through `CRM_API_URL`),
 * else ROWBRIDGE_API_URL.
 */
function platformUnreachable(err: ApiError, io: CliIo): string {
  const socket = socketAddress(err);
  const candidates = Object.entries(io.env)
    .filter(([name, value]) => name.endsWith('_API_URL') && value !== undefined && value !== '')
    .map(([name, value]) => ({ name, at: hostPort(value!) }));
  const match =
    candidates.find(({ at }) => socket !== undefined && at === `${socket.host}:${socket.port}`) ??
    candidates.find(({ at }) => socket?.port !== undefined && at?.endsWith(`:${socket.port}`)) ??
    candidates.find(({ name }) => name === 'ROWBRIDGE_API_URL');
  const at =
    match?.at ??
    (socket === undefined
      ? 'its address'
      : `${socket.host}${socket.port === undefined ? '' : `:${socket.port}`}`);
  return `cannot reach the platform at ${at} (${match?.name ?? 'ROWBRIDGE_API_URL'}): ${err.message}`;
}

/**
 * A run's recorded failure that was a network failure, said as `check` says it:
 * `cannot reach the platform at host:port (VARIABLE): ...`, the variable being the API
 * URL of the job's credentials (`<prefix>API_URL`, ROWBRIDGE_API_URL by default).
 * Any other message comes back as it is.
 */
export function namePlatformHost(message: string, env: NodeJS.ProcessEnv, prefix = 'ROWBRIDGE_'): string {
  if (!/ network failure /.test(message)) return message;
  const name = `${prefix}API_URL`;
  const value = env[name];
  const at = value === undefined || value === '' ? undefined : hostPort(value);
  return `cannot reach the platform at ${at ?? 'its default address'} (${name}): ${message}`;
}

/** Prints a command's failure as one clear message (no stack for expected errors). */
export function reportFailure(err: unknown, io: CliIo): number {
  if (err instanceof UsageError || err instanceof BackfillRangeError) {
    io.err(err.message);
    return EXIT.usage;
  }
  if (err instanceof JobBusyError) {
    io.err(err.message);
    return EXIT.busy;
  }
  if (err instanceof RunInterruptedError) {
    io.err(err.message);
    return EXIT.interrupted;
  }
  if (err instanceof RedisUnreachableError) {
    io.err(err.message);
    return EXIT.failure;
  }
  if (err instanceof ApiError && / network failure /.test(err.message)) {
    io.err(platformUnreachable(err, io));
    return EXIT.failure;
  }
  if (err instanceof JobSpecError || err instanceof ConfigError || err instanceof RowbridgeError) {
    io.err(err.message);
    return EXIT.failure;
  }
  if (isRedisOutage(err)) {
    // Redis went away after the command had reached it (the probe passed).
    let where = 'the address in REDIS_URL';
    try {
      where = redisAddress(loadSettings(io.env).redisUrl);
    } catch {
      // the settings themselves are wrong: the generic wording stands
    }
    io.err(`cannot reach Redis at ${where} (REDIS_URL): ${(err as Error).message}`);
    return EXIT.failure;
  }
  io.err(err instanceof Error ? (err.stack ?? err.message) : String(err));
  return EXIT.failure;
}
