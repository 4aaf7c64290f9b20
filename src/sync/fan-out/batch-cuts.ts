import type { Redis } from 'ioredis';
import { stateKey } from '../state/redis-types.ts';

/** Where each batch job of one parent ends, as stored by earlier reads of it. */
export interface BatchCuts {
  /** The place (among the mapped rows read) of each stored job's last row, in job order. */
  readonly stored: number[];
  /** Stores the end of the next job, before the job is added. */
  store(place: number): Promise<void>;
}

/** Where the cuts of a run's jobs are kept: row state, it expires with the run's outcomes. */
export interface BatchCutsDeps {
  redis: Redis;
  statePrefix: string;
  rowStateTtlDays: number;
}

/**
 * Where each batch job of a parent ends (the place of its last row among the mapped
 * rows read), in Redis. With unchanged rows settled at read time, which rows a job
 * holds depends on the key index, and that changes as jobs write; a row not yet written
 * keeps its class, so cutting a re-read at the stored places gives every unwritten row
 * the job id it had. Each end is stored before its job is added.
 */
export async function loadBatchCuts(
  deps: BatchCutsDeps,
  runId: string,
  parentId: string,
): Promise<BatchCuts> {
  const key = stateKey(deps.statePrefix, 'run', runId, 'cuts', parentId);
  const ttl = Math.max(1, Math.round(deps.rowStateTtlDays * 86_400));
  const stored = (await deps.redis.lrange(key, 0, -1)).map(Number);
  return {
    stored,
    async store(index) {
      await deps.redis.multi().rpush(key, String(index)).expire(key, ttl).exec();
      stored.push(index);
    },
  };
}
