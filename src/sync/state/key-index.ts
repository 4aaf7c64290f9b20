import { createCompactKeyIndex } from './compact-key-index.ts';
import type { IndexEntry, KeyIndex } from './key-index-types.ts';
import type { RedisClient } from './redis-types.ts';
import { stateKey } from './redis-types.ts';

export type { IndexEntry, KeyIndex } from './key-index-types.ts';

const SEP = '\u0001';

function encode(entry: IndexEntry): string {
  return `${entry.rowId}${SEP}${entry.hash}`;
}

// Every value is written by encode, so it holds the separator (row ids never do).
function decode(value: string): IndexEntry {
  const i = value.indexOf(SEP);
  return { rowId: value.slice(0, i), hash: value.slice(i + 1) };
}

/** The index format of a sync mode: mirror deletes list keys, the compact form keeps digests only. */
export function indexFormatOf(mode: 'append' | 'upsert' | 'update' | 'mirror'): 'compact' | 'keys' {
  return mode === 'mirror' ? 'keys' : 'compact';
}

/** Where a job's key index lives, and in which form. */
export interface KeyIndexDeps {
  redis: RedisClient;
  prefix: string;
  job: string;
  /**
   * `compact`: digests of the keys in listpack buckets, under 40 bytes of Redis per key
   * (compact-key-index.ts), for upsert and update. `keys`: one hash of full keys, about
   * 130 bytes per key, the form that can list its keys (mirror deletes need them).
   * @defaultValue 'keys'
   */
  format?: 'compact' | 'keys';
}

/**
 * The key → row index of one job, in Redis so that every worker of a run sees the same
 * index and keeps it current as it writes. The two formats live under different keys;
 * a rebuild (every run starts with one) carries the content hashes over from the other
 * format and deletes it, so a job whose mode changed is converted by its next run without
 * rewriting unchanged rows.
 */
export function createKeyIndex(deps: KeyIndexDeps): KeyIndex {
  const fullKeys = stateKey(deps.prefix, 'index', deps.job);
  const compactBase = stateKey(deps.prefix, 'index2', deps.job);
  if (deps.format === 'compact') {
    const previous = createFullKeyIndex(deps.redis, fullKeys);
    return createCompactKeyIndex({ redis: deps.redis, base: compactBase, previous });
  }
  return createFullKeyIndex(
    deps.redis,
    fullKeys,
    createCompactKeyIndex({ redis: deps.redis, base: compactBase }),
  );
}

/** The full-key format: one Redis hash, key → `rowId SOH hash`. */
function createFullKeyIndex(
  redis: RedisClient,
  key: string,
  previous?: { getMany: KeyIndex['getMany']; clear(): Promise<void> },
): KeyIndex {
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
        const other =
          previous === undefined
            ? new Map<string, IndexEntry>()
            : await previous.getMany(page.map((r) => r.key));
        const args: string[] = [];
        page.forEach((r, i) => {
          const raw = old[i];
          const prev = raw == null ? other.get(r.key) : decode(raw);
          const hash = prev !== undefined && prev.rowId === r.rowId ? prev.hash : '';
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
        await previous?.clear();
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
