/**
 * Jobs whose schedule an operator paused (from the dashboard). Kept in Redis, not in the
 * job file, so that a pause holds across worker restarts without anyone editing specs:
 * `registerSchedules` leaves a paused job without a scheduler until it is resumed.
 */
import type { RedisClient } from './redis-types.ts';
import { stateKey } from './redis-types.ts';

/** The paused schedules, by job name. */
export interface JobPauses {
  /** When each paused job was paused (ISO timestamp). */
  list(): Promise<Map<string, string>>;
  isPaused(job: string): Promise<boolean>;
  pause(job: string): Promise<void>;
  resume(job: string): Promise<void>;
}

export function createJobPauses(deps: { redis: RedisClient; prefix: string }): JobPauses {
  const key = stateKey(deps.prefix, 'schedule-paused');
  return {
    async list() {
      return new Map(Object.entries(await deps.redis.hgetall(key)));
    },
    async isPaused(job) {
      return (await deps.redis.hexists(key, job)) === 1;
    },
    async pause(job) {
      await deps.redis.hset(key, job, new Date().toISOString());
    },
    async resume(job) {
      await deps.redis.hdel(key, job);
    },
  };
}
