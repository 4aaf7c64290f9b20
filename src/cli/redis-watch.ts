import { RowbridgeError } from '../ground/errors.ts';
import { redisAddress } from '../ground/redis-address.ts';
import type { Settings } from '../../config/settings.ts';
import type { CliIo } from './io.ts';
import { isRedisOutage } from '../ground/redis-outage.ts';

/** Redis went away under a running command and did not come back in time. */
export class RedisGoneError extends RowbridgeError {
  override name = 'RedisGoneError';
  override readonly code = 'REDIS_GONE';
  override readonly category = 'transient';
}

/** How often a command waiting for Redis says so, and tries again. */
const RETRY_EVERY_MS = 2_000;

/** Where the watched Redis is, and how long a command waits for it. */
export interface RedisWatchDeps {
  settings: Pick<Settings, 'redisUrl' | 'redisWaitMs'>;
}

/**
 * Lets a long command (`run`, `dlq replay`) outlast a Redis restart: a call that fails
 * because Redis went away is tried again until Redis answers, one line per try, for up
 * to ROWBRIDGE_REDIS_WAIT_MS; then {@link RedisGoneError}. BullMQ's workers reconnect
 * by themselves meanwhile; the run's state is in Redis, so nothing is decided here.
 */
export function createRedisWatch(
  rt: RedisWatchDeps,
  io: CliIo,
  /** What giving up leaves behind, said last. @defaultValue the run stays resumable */
  leaves = 'the run stays resumable: run the job again once Redis is back',
): { outlast<T>(fn: () => Promise<T>): Promise<T> } {
  const where = `Redis at ${redisAddress(rt.settings.redisUrl)} (REDIS_URL)`;
  return {
    async outlast(fn) {
      let since: number | undefined;
      for (;;) {
        try {
          const value = await fn();
          if (since !== undefined) io.err(`${where} is back: carrying on`);
          return value;
        } catch (err) {
          if (!isRedisOutage(err)) throw err;
          since ??= Date.now();
          const waited = Date.now() - since;
          const limit = rt.settings.redisWaitMs;
          if (waited >= limit) {
            throw new RedisGoneError(
              `${where} did not come back within ${limit} ms (ROWBRIDGE_REDIS_WAIT_MS); ${leaves}`,
            );
          }
          io.err(
            `waiting for ${where}: ${(err as Error).message} (${Math.round(waited / 1000)} s of ${limit / 1000} s)`,
          );
          await new Promise((r) => setTimeout(r, Math.min(RETRY_EVERY_MS, limit - waited)));
        }
      }
    },
  };
}
