/**
 * Whether the Redis of REDIS_URL answers, asked once before a command opens its
 * runtime: a command that cannot reach Redis says so in one line instead of retrying
 * into ioredis' MaxRetriesPerRequestError and a stack trace.
 */
import { RowbridgeError } from '../ground/errors.ts';
import { redisAddress } from '../ground/redis-address.ts';
import { createRedisConnection } from '../queue/redis-connection.ts';

/** Nothing answers at REDIS_URL (refused, timed out, unknown host). */
export class RedisUnreachableError extends RowbridgeError {
  override name = 'RedisUnreachableError';
  /** host:port (or the nodes of a cluster), never the password. */
  readonly address: string;

  constructor(url: string, reason: string, options?: ErrorOptions) {
    super(`cannot reach Redis at ${redisAddress(url)} (REDIS_URL): ${reason}`, options);
    this.address = redisAddress(url);
  }
}

const ABSENT_CODES = new Set([
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const ABSENT_MESSAGES =
  /Connection is closed|connect ETIMEDOUT|Failed to refresh slots cache|None of startup nodes is available|MaxRetriesPerRequest/i;

/** Whether an error of a Redis probe (ioredis or the socket under it) means nothing answered. */
function isRedisUnreachable(err: unknown): boolean {
  for (let e = err; typeof e === 'object' && e !== null; e = (e as { cause?: unknown }).cause) {
    if (e instanceof RedisUnreachableError) return true;
    const { code, name, message } = e as { code?: unknown; name?: unknown; message?: unknown };
    if (typeof code === 'string' && ABSENT_CODES.has(code)) return true;
    if (name === 'MaxRetriesPerRequestError') return true;
    if (typeof message === 'string' && ABSENT_MESSAGES.test(message)) return true;
  }
  return false;
}

function reasonOf(err: unknown): string {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string') return code;
  return typeof message === 'string' ? message : String(err);
}

/**
 * `ok` when Redis answers PING, a {@link RedisUnreachableError} when nothing answers
 * (one attempt, no reconnecting), another Error when something answers but refuses
 * (a password, TLS).
 */
export async function probeRedis(url: string, timeoutMs = 3000): Promise<'ok' | Error> {
  const client = createRedisConnection(url, {
    bullmq: false,
    lazyConnect: true,
    connectTimeoutMs: timeoutMs,
    once: true,
  });
  // ioredis reports the cause on 'error' and rejects connect() with "Connection is closed".
  let lastError: unknown;
  client.on('error', (err: unknown) => {
    lastError = err;
  });
  try {
    await client.connect();
    await client.ping();
    return 'ok';
  } catch (err) {
    const cause = lastError ?? err;
    if (isRedisUnreachable(cause)) return new RedisUnreachableError(url, reasonOf(cause), { cause });
    return new RowbridgeError(
      `Redis at ${redisAddress(url)} (REDIS_URL) answered but refused: ${reasonOf(cause)}`,
      {
        cause,
      },
    );
  } finally {
    // A client that has given up already ('end') holds a closed socket: ioredis'
    // disconnect() would still arm a 2 s timer waiting for its 'close', and keep the
    // process alive for that long after the message.
    if (client.status !== 'end') client.disconnect();
  }
}

/** Resolves when Redis answers; throws the probe's error otherwise. */
export async function ensureRedisReachable(url: string, timeoutMs?: number): Promise<void> {
  const answer = await probeRedis(url, timeoutMs);
  if (answer !== 'ok') throw answer;
}

/** How long a command waits between two probes of a Redis that is not there yet. */
const PROBE_AGAIN_MS = 500;

/**
 * Resolves once Redis answers, probing again while nothing answers for up to `withinMs`
 * (a Redis started beside the process may take a moment); then throws the last probe's
 * {@link RedisUnreachableError}. A Redis that answers but refuses fails at once. For a
 * long-lived command (`worker`): ROWBRIDGE_REDIS_WAIT_MS is for an outage after it was
 * connected, not for a Redis it never reached.
 */
export async function waitForFirstRedis(url: string, withinMs: number): Promise<void> {
  const deadline = performance.now() + withinMs;
  for (;;) {
    const left = deadline - performance.now();
    const answer = await probeRedis(url, Math.max(500, Math.min(3000, left)));
    if (answer === 'ok') return;
    if (!(answer instanceof RedisUnreachableError) || deadline - performance.now() <= PROBE_AGAIN_MS)
      throw answer;
    await new Promise((r) => setTimeout(r, PROBE_AGAIN_MS));
  }
}
