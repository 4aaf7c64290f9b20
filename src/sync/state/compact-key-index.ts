/**
 * The key index of upsert and update jobs in under 40 bytes of Redis per key (39.8 at a
 * million keys, bench/key-index.ts): a key is stored as 8 bytes of its SHA-1 in a bucket hash small
 * enough to stay listpack-encoded, its entry as a binary row id + content hash
 * (index-entry-codec.ts). The full-key hash it replaces cost about 130 bytes per key.
 *
 * Digest collisions. Two keys with one digest are told apart by keeping the later one
 * under its full key in an overflow hash: exactly, when both meet in a rebuild (where every
 * key is distinct) or when the digest already belongs to another row; a lookup looks there
 * first. What it cannot see is a key never indexed whose digest an indexed key holds; the
 * chance of that is (keys in the index) / 2^64 per new key, about 5e-14 at a million keys.
 *
 * It does not keep the keys themselves, so it cannot list them: mirror jobs, which
 * delete the rows whose key the source no longer has, keep the full-key index
 * (key-index.ts). Each run rebuilds its index from the worksheet, so an index of the
 * other format (the job's mode changed) is replaced by the next run,
 * its content hashes carried over.
 */
import { randomBytes } from 'node:crypto';
import { INDEX_SCRIPTS, runIndexScript } from './compact-key-index-scripts.ts';
import { decodeEntry, encodeEntry, keyDigest } from './index-entry-codec.ts';
import type { IndexEntry, KeyIndex } from './key-index-types.ts';
import type { RedisClient } from './redis-types.ts';

/**
 * Average entries per bucket before linear hashing splits one. A bucket not yet split in
 * the current round holds up to twice the average, and a hash stays a listpack up to
 * hash-max-listpack-entries (128 by default): 48 keeps nearly every bucket under it.
 */
const BUCKET_LOAD = 48;
/** Entries per script call: keeps each call well under a millisecond of Redis time. */
const PAGE = 1000;

/** What a generation of the compact index holds (for tests and the bench). */
export interface CompactIndexInfo {
  gen: string;
  /** Buckets: 2^level + split pointer. */
  buckets: number;
  entries: number;
  /** Keys kept under their full key because another key holds their digest. */
  overflow: number;
}

/** A {@link KeyIndex} that can also say how its current generation is laid out. */
export interface CompactKeyIndex extends KeyIndex {
  info(): Promise<CompactIndexInfo | undefined>;
}

export interface CompactKeyIndexDeps {
  redis: RedisClient;
  /** Key of the current generation's name; every other key of the index starts with it. */
  base: string;
  /**
   * The full-key index this one replaces. A rebuild carries its hashes over and deletes
   * it; until then (a run resumed across an upgrade starts without a rebuild) keys this
   * index misses are looked up there and removed from both, so no row is created twice.
   */
  previous?: Pick<KeyIndex, 'getMany' | 'removeMany' | 'size' | 'clear'>;
  /** Test seam: the key's digest (at least 4 bytes). */
  digest?: (key: string) => Buffer;
}

/**
 * The compact index of one job under `base`. Every operation is one Lua call per 1,000
 * keys, so workers on several machines share it and a split or a rebuild's switch to a
 * new generation is atomic for each of them.
 */
export function createCompactKeyIndex(deps: CompactKeyIndexDeps): CompactKeyIndex {
  const { redis, base } = deps;
  const digest = deps.digest ?? keyDigest;
  const run = (
    s: (typeof INDEX_SCRIPTS)[keyof typeof INDEX_SCRIPTS],
    args: Array<string | number | Buffer>,
  ) => runIndexScript(redis, s, base, [base, ...args]);

  async function getFrom(gen: string, keys: readonly string[]): Promise<Map<string, IndexEntry>> {
    const out = new Map<string, IndexEntry>();
    for (let i = 0; i < keys.length; i += PAGE) {
      const page = keys.slice(i, i + PAGE);
      const args: Array<string | Buffer> = [gen];
      for (const k of page) args.push(k, digest(k));
      const values = (await run(INDEX_SCRIPTS.get, args)) as Array<Buffer | null>;
      page.forEach((k, j) => {
        const v = values[j];
        if (v != null) out.set(k, decodeEntry(v));
      });
    }
    return out;
  }

  async function setIn(gen: string, entries: Iterable<[string, IndexEntry]>): Promise<number> {
    let overflowed = 0;
    let args: Array<string | number | Buffer> = [];
    const flush = async () => {
      if (args.length === 0) return;
      overflowed += Number(await run(INDEX_SCRIPTS.set, [gen, newGenName(), BUCKET_LOAD, ...args]));
      args = [];
    };
    for (const [k, e] of entries) {
      args.push(k, digest(k), encodeEntry(e));
      if (args.length >= PAGE * 3) await flush();
    }
    await flush();
    return overflowed;
  }

  async function info(gen = ''): Promise<CompactIndexInfo | undefined> {
    const raw = (await run(INDEX_SCRIPTS.info, [gen])) as [Buffer, number, number, number, number] | null;
    if (raw === null) return undefined;
    const [name, level, split, entries, overflow] = raw;
    return { gen: name.toString(), buckets: 2 ** level + split, entries, overflow };
  }

  /** Deletes one generation's keys (after it stopped being current, or when it failed). */
  async function dropGen(gen: string): Promise<void> {
    const held = await info(gen);
    const keys = [`${base}:${gen}:m`, `${base}:${gen}:x`];
    for (let i = 0; i < (held?.buckets ?? 0); i++) keys.push(`${base}:${gen}:b:${i}`);
    for (let i = 0; i < keys.length; i += PAGE) await redis.unlink(...keys.slice(i, i + PAGE));
  }

  // Whether `previous` still holds entries: asked once, and only once a lookup misses.
  let previousHolds: boolean | undefined;
  const previousHoldsEntries = async () =>
    deps.previous !== undefined && (previousHolds ??= (await deps.previous.size()) > 0);

  const index: CompactKeyIndex = {
    async rebuild(rows) {
      const gen = newGenName();
      const old = (await redis.get(base)) ?? undefined;
      let keys = 0;
      let duplicates = 0;
      // Exact duplicate detection needs the keys: two worksheet rows with one key are a
      // duplicate, two keys with one digest are not.
      const seen = new Set<string>();
      let page: Array<{ key: string; rowId: string }> = [];
      const flush = async () => {
        if (page.length === 0) return;
        const keysOfPage = page.map((r) => r.key);
        const before = old === undefined ? new Map<string, IndexEntry>() : await getFrom(old, keysOfPage);
        const legacy =
          deps.previous === undefined
            ? new Map<string, IndexEntry>()
            : await deps.previous.getMany(keysOfPage);
        await setIn(
          gen,
          page.map((r): [string, IndexEntry] => {
            const prev = before.get(r.key) ?? legacy.get(r.key);
            return [r.key, { rowId: r.rowId, hash: prev?.rowId === r.rowId ? prev.hash : '' }];
          }),
        );
        page = [];
      };
      let switched = false;
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
          if (page.length >= PAGE) await flush();
        }
        await flush();
        if (keys === 0) await redis.del(base);
        else await redis.set(base, gen);
        switched = keys > 0;
        if (old !== undefined) await dropGen(old);
        await deps.previous?.clear();
        previousHolds = false;
      } finally {
        if (!switched) await dropGen(gen);
      }
      return { keys, duplicates };
    },
    async getMany(keys) {
      if (keys.length === 0) return new Map();
      const found = await getFrom('', keys);
      if (found.size < keys.length && (await previousHoldsEntries())) {
        const older = await deps.previous!.getMany(keys.filter((k) => !found.has(k)));
        for (const [k, e] of older) found.set(k, e);
      }
      return found;
    },
    async setMany(entries) {
      if (entries.size > 0) await setIn('', entries);
    },
    async removeMany(keys) {
      if (await previousHoldsEntries()) await deps.previous!.removeMany(keys);
      for (let i = 0; i < keys.length; i += PAGE) {
        const args: Array<string | Buffer> = [''];
        for (const k of keys.slice(i, i + PAGE)) args.push(k, digest(k));
        await run(INDEX_SCRIPTS.remove, args);
      }
    },
    // A generator that refuses: the KeyIndex type has it, mirror jobs never get this format.
    // eslint-disable-next-line require-yield
    async *entries() {
      await Promise.reject(
        new Error(
          'the compact key index keeps digests, not keys, and cannot list them; mirror jobs use the full-key index',
        ),
      );
    },
    async size() {
      const held = await info();
      return held === undefined ? 0 : held.entries + held.overflow;
    },
    async clear() {
      const gen = await redis.get(base);
      await redis.del(base);
      if (gen !== null) await dropGen(gen);
      await deps.previous?.clear();
      previousHolds = false;
    },
    info: () => info(),
  };
  return index;
}

function newGenName(): string {
  return randomBytes(4).toString('base64url');
}
