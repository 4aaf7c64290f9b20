import type { RedisClient } from './redis-types.ts';
import { stateKey } from './redis-types.ts';

/**
 * What the last full scan of a job's worksheet stamped: the key index then held every
 * key of that worksheet, for these key fields, in this format.
 */
export interface IndexAdoption {
  /** When the scan finished (ISO). */
  at: string;
  worksheetId: string;
  /** Field ids of the key, in order. */
  keyFields: string[];
  format: 'compact' | 'keys';
  /** Keys the index held after the scan. */
  keys: number;
}

/** The adoption stamps of jobs, one Redis string each. */
export interface IndexAdoptions {
  get(job: string): Promise<IndexAdoption | undefined>;
  stamp(job: string, adoption: IndexAdoption): Promise<void>;
}

/**
 * A stamp lives next to the index, not inside it: a Redis that lost its data lost both
 * (the next run sees no stamp and scans), and an index deleted or evicted on its own is
 * told by the stamp's key count against what the index holds (sync/write/key-scan.ts).
 */
export function createIndexAdoptions(deps: { redis: RedisClient; prefix: string }): IndexAdoptions {
  const key = (job: string) => stateKey(deps.prefix, 'adopted', job);
  return {
    async get(job) {
      const raw = await deps.redis.get(key(job));
      if (raw === null) return undefined;
      try {
        const value = JSON.parse(raw) as Partial<IndexAdoption>;
        if (
          typeof value.at !== 'string' ||
          typeof value.worksheetId !== 'string' ||
          !Array.isArray(value.keyFields) ||
          (value.format !== 'compact' && value.format !== 'keys') ||
          typeof value.keys !== 'number'
        )
          return undefined;
        return value as IndexAdoption;
      } catch {
        // A stamp this version cannot read is no stamp: the run scans, which is always safe.
        return undefined;
      }
    },
    async stamp(job, adoption) {
      await deps.redis.set(key(job), JSON.stringify(adoption));
    },
  };
}
