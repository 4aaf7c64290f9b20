import type { RedisClient } from './redis-types.ts';
import { stateKey } from './redis-types.ts';

/** What the index knows of one key: the row holding it and the hash rowbridge last wrote there. */
export interface IndexEntry {
  rowId: string;
  /** Content hash of the payload last written by this job; '' when unknown. */
  hash: string;
}

export interface KeyIndex {
  /**
   * Rebuilds the index from the worksheet's rows (key field only). Hashes of rows
   * whose id did not change are kept, so an unchanged re-run writes nothing; keys no
   * longer in the worksheet disappear. Returns the number of keys and of duplicates.
   */
  rebuild(rows: AsyncIterable<{ key: string; rowId: string }>): Promise<{ keys: number; duplicates: number }>;
  getMany(keys: readonly string[]): Promise<Map<string, IndexEntry>>;
  setMany(entries: ReadonlyMap<string, IndexEntry>): Promise<void>;
  removeMany(keys: readonly string[]): Promise<void>;
  /** Every key with its row, streamed (for mirror deletes). */
  entries(): AsyncGenerator<[string, IndexEntry]>;
  size(): Promise<number>;
  clear(): Promise<void>;
}

const SEP = '\u0001';

function encode(entry: IndexEntry): string {
  return `${entry.rowId}${SEP}${entry.hash}`;
}

function decode(value: string): IndexEntry {
  const i = value.indexOf(SEP);
  return i === -1 ? { rowId: value, hash: '' } : { rowId: value.slice(0, i), hash: value.slice(i + 1) };
}

/**
 * The key → row index of one job, in a Redis hash so that every worker of a run sees
 * the same index and keeps it current as it writes.
 */
export function createKeyIndex(deps: { redis: RedisClient; prefix: string; job: string }): KeyIndex {
  const { redis } = deps;
  const key = stateKey(deps.prefix, 'index', deps.job);

  return {
    async rebuild(rows) {
      const next = `${key}:rebuild:${process.pid}:${Date.now()}`;
      let keys = 0;
      let duplicates = 0;
      const seen = new Set<string>();
      let page: Array<{ key: string; rowId: string }> = [];
      const flush = async () => {
        if (page.length === 0) return;
        const old = await redis.hmget(key, ...page.map((r) => r.key));
        const args: string[] = [];
        page.forEach((r, i) => {
          const prev = old[i];
          const hash = prev != null && decode(prev).rowId === r.rowId ? decode(prev).hash : '';
          args.push(r.key, encode({ rowId: r.rowId, hash }));
        });
        await redis.hset(next, ...args);
        page = [];
      };
      try {
        for await (const row of rows) {
          // Two worksheet rows with one key: the first (oldest) is the one rowbridge updates.
          if (seen.has(row.key)) {
            duplicates += 1;
            continue;
          }
          seen.add(row.key);
          keys += 1;
          page.push(row);
          if (page.length >= 1000) await flush();
        }
        await flush();
        if (keys === 0) await redis.del(key);
        else await redis.rename(next, key);
      } finally {
        await redis.del(next);
      }
      return { keys, duplicates };
    },
    async getMany(keys) {
      const out = new Map<string, IndexEntry>();
      if (keys.length === 0) return out;
      const values = await redis.hmget(key, ...keys);
      keys.forEach((k, i) => {
        const v = values[i];
        if (v != null) out.set(k, decode(v));
      });
      return out;
    },
    async setMany(entries) {
      if (entries.size === 0) return;
      const args: string[] = [];
      for (const [k, e] of entries) args.push(k, encode(e));
      await redis.hset(key, ...args);
    },
    async removeMany(keys) {
      if (keys.length > 0) await redis.hdel(key, ...keys);
    },
    async *entries() {
      let cursor = '0';
      do {
        const [nextCursor, flat] = await redis.hscan(key, cursor, 'COUNT', 1000);
        cursor = nextCursor;
        for (let i = 0; i + 1 < flat.length; i += 2)
          yield [flat[i]!, decode(flat[i + 1]!)] as [string, IndexEntry];
      } while (cursor !== '0');
    },
    size: () => redis.hlen(key),
    async clear() {
      await redis.del(key);
    },
  };
}
