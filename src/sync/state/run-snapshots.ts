import type { WorksheetStructure } from '../../api/types.ts';
import type { RedisClient } from './redis-types.ts';
import { stateKey } from './redis-types.ts';

/** What a run started with: the job spec's file and text, and the target's structure. */
export interface RunSnapshot {
  file: string;
  /** The spec text; with `masked`, re-written with those values masked (sync/prepare/snapshot-credentials.ts). */
  text: string;
  /** Where credentials were masked out of `text`, as key paths. */
  masked?: Array<Array<string | number>>;
  structure?: WorksheetStructure;
}

/** The snapshot of each run, kept as long as the run's record. */
export interface RunSnapshots {
  get(runId: string): Promise<RunSnapshot | undefined>;
  save(runId: string, snapshot: RunSnapshot): Promise<void>;
  /** A resumed run after a fix prepares again (the fix may be in the spec). */
  drop(runId: string): Promise<void>;
}

export function createRunSnapshots(deps: {
  redis: RedisClient;
  prefix: string;
  ttlSeconds: number;
}): RunSnapshots {
  const key = (runId: string) => stateKey(deps.prefix, 'run', runId, 'spec');
  return {
    async get(runId) {
      const raw = await deps.redis.get(key(runId));
      return raw === null ? undefined : (JSON.parse(raw) as RunSnapshot);
    },
    async save(runId, snapshot) {
      await deps.redis.set(key(runId), JSON.stringify(snapshot), 'EX', deps.ttlSeconds);
    },
    async drop(runId) {
      await deps.redis.del(key(runId));
    },
  };
}
