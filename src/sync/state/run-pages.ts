/**
 * All runs across jobs a page at a time, newest first, for the dashboard's `/runs`. The
 * cursor is the last run's place in the runs index (its score and id), not an offset:
 * runs created while a person pages would shift an offset and show a run twice.
 */
import type { RedisClient } from './redis-types.ts';
import { stateKey } from './redis-types.ts';
import type { RunRecord, RunStatus, RunStore } from './run-store.ts';

/** What {@link RunPages.page} narrows by; every given criterion must match. */
export interface RunPageQuery {
  status?: RunStatus;
  job?: string;
  /** Runs per page. @defaultValue 50 */
  limit?: number;
  /** The `next` of the page before. */
  cursor?: string;
  /**
   * Index entries read at most for one page, so a rare status never makes one request
   * read every record: the page then ends short, with a `next`. @defaultValue 5000
   */
  maxScan?: number;
}

/** Reads the runs index a page at a time. */
export interface RunPages {
  /** Throws a RangeError for a cursor that is not one of this list's. */
  page(query: RunPageQuery): Promise<{ records: RunRecord[]; next?: string }>;
}

const READ = 200;

function parseCursor(cursor: string): { score: number; id: string } {
  const at = cursor.indexOf(':');
  const score = Number(cursor.slice(0, at));
  if (at < 1 || !Number.isSafeInteger(score)) throw new RangeError(`not a runs page cursor: ${cursor}`);
  return { score, id: cursor.slice(at + 1) };
}

/** `redis` and `prefix` are the run store's; an id whose record expired is skipped. */
export function createRunPages(deps: {
  redis: RedisClient;
  prefix: string;
  runs: Pick<RunStore, 'get'>;
}): RunPages {
  const indexKey = stateKey(deps.prefix, 'runs');
  return {
    async page(query) {
      const limit = query.limit ?? 50;
      const maxScan = query.maxScan ?? 5000;
      let after = query.cursor === undefined ? undefined : parseCursor(query.cursor);
      const records: RunRecord[] = [];
      let scanned = 0;
      for (;;) {
        // Ties in score come highest id first (ZREVRANGE order): those at the cursor's
        // score with an id not below the cursor's were on the pages before.
        const raw = await deps.redis.zrevrangebyscore(
          indexKey,
          after === undefined ? '+inf' : after.score,
          '-inf',
          'WITHSCORES',
          'LIMIT',
          0,
          READ,
        );
        const ids: Array<{ id: string; score: number }> = [];
        for (let i = 0; i + 1 < raw.length; i += 2) ids.push({ id: raw[i]!, score: Number(raw[i + 1]) });
        const fresh = ids.filter(
          ({ id, score }) => after === undefined || score < after.score || id < after.id,
        );
        if (fresh.length === 0) return { records };
        const found = await Promise.all(fresh.map(({ id }) => deps.runs.get(id)));
        for (const [i, entry] of fresh.entries()) {
          scanned += 1;
          after = entry;
          const record = found[i];
          if (
            record !== undefined &&
            (query.status === undefined || record.status === query.status) &&
            (query.job === undefined || record.job === query.job)
          )
            records.push(record);
          const more = i < fresh.length - 1 || ids.length === READ;
          if ((records.length >= limit || scanned >= maxScan) && more)
            return { records, next: `${entry.score}:${entry.id}` };
        }
        if (ids.length < READ) return { records };
      }
    },
  };
}
