/**
 * Redis memory of a job's key index per key (issue #12): the compact index
 * (src/sync/state/compact-key-index.ts) against the full-key hash it replaces, same keys,
 * same entries, same run.
 *
 * Each format gets `--keys` entries of the orders fixture's shape: keys `SO-00000001`...,
 * platform row ids (lowercase UUIDs) and content hashes (the compact index: 6 bytes, as
 * map-record.ts makes them now; the full-key index: the 27-character SHA-1 it holds from
 * older rowbridge), written with `setMany` in pages of 1000, the way a first import fills
 * the index as it creates rows (the compact index grows by splitting buckets as it goes). Then the whole
 * index is rebuilt from the same keys (what every run starts with), and read back with
 * `getMany` in pages of 1000 to check every entry and time the lookups.
 *
 * How to read it: `bytesPerKey` is the sum of `MEMORY USAGE` (SAMPLES 0: every element
 * counted) over the index's Redis keys, divided by the keys; it does not move with other
 * clients of the Redis. `usedMemoryBytesPerKey` is the change of INFO used_memory, which
 * does (a shared Redis makes it noisy). `ratio` is compact / full-key. `limit` is the
 * target; `withinLimit` whether the compact index met it after the writes and after the
 * rebuild. `lookupsPerSec` is getMany throughput from this process, one page at a time.
 *
 * Usage: node bench/key-index.ts [--keys 1000000]. Prints one JSON object on stdout.
 */
import { hash, randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { createKeyIndex } from '../src/sync/state/key-index.ts';
import type { IndexEntry, KeyIndex } from '../src/sync/state/key-index.ts';
import { parseNumberFlags } from './lib/bench-flags.ts';

const LIMIT_BYTES_PER_KEY = 40;
const PAGE = 1000;
const { keys: total } = parseNumberFlags('bench/key-index.ts', { keys: { default: 1_000_000 } });
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefix = `rbbench-keyindex-${process.pid}`;

const keyOf = (i: number) => `SO-${String(i + 1).padStart(8, '0')}`;
const rowIds: string[] = Array.from({ length: total }, () => randomUUID());
// The content hash as map-record.ts makes it (6 bytes of SHA-1), and as rowbridge made it
// before the compact index (the whole SHA-1, 27 characters): the full-key index is measured
// as users' Redis holds it from then.
const newHashOf = (i: number) => hash('sha1', `row ${i}`, 'buffer').subarray(0, 6).toString('base64url');
const oldHashOf = (i: number) => hash('sha1', `row ${i}`, 'base64url');

async function usedMemory(): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}

/** Sum of MEMORY USAGE over every Redis key of the index. */
async function indexBytes(pattern: string): Promise<{ bytes: number; redisKeys: number }> {
  let cursor = '0';
  let bytes = 0;
  let redisKeys = 0;
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    const pipe = redis.pipeline();
    for (const k of found) pipe.memory('USAGE', k, 'SAMPLES', 0);
    for (const [err, n] of (await pipe.exec()) ?? []) {
      if (err) throw err;
      bytes += Number(n);
      redisKeys += 1;
    }
  } while (cursor !== '0');
  return { bytes, redisKeys };
}

async function* worksheetKeys() {
  await Promise.resolve();
  for (let i = 0; i < total; i++) yield { key: keyOf(i), rowId: rowIds[i]! };
}

async function measure(format: 'compact' | 'keys') {
  const job = `job-${format}`;
  const hashOf = format === 'compact' ? newHashOf : oldHashOf;
  const index: KeyIndex = createKeyIndex({ redis, prefix, job, format });
  const pattern = `${prefix}:${format === 'compact' ? 'index2' : 'index'}:${job}*`;
  const before = await usedMemory();
  const writeStarted = performance.now();
  for (let i = 0; i < total; i += PAGE) {
    const page = new Map<string, IndexEntry>();
    for (let j = i; j < Math.min(total, i + PAGE); j++)
      page.set(keyOf(j), { rowId: rowIds[j]!, hash: hashOf(j) });
    await index.setMany(page);
  }
  const writeSeconds = (performance.now() - writeStarted) / 1000;
  const afterWrites = await indexBytes(pattern);
  const usedAfterWrites = (await usedMemory()) - before;

  const rebuildStarted = performance.now();
  const rebuilt = await index.rebuild(worksheetKeys());
  const rebuildSeconds = (performance.now() - rebuildStarted) / 1000;
  const afterRebuild = await indexBytes(pattern);

  let mismatches = 0;
  const readStarted = performance.now();
  for (let i = 0; i < total; i += PAGE) {
    const page: string[] = [];
    for (let j = i; j < Math.min(total, i + PAGE); j++) page.push(keyOf(j));
    const got = await index.getMany(page);
    page.forEach((k, n) => {
      const e = got.get(k);
      if (e === undefined || e.rowId !== rowIds[i + n] || e.hash !== hashOf(i + n)) mismatches += 1;
    });
  }
  const readSeconds = (performance.now() - readStarted) / 1000;
  const size = await index.size();
  await index.clear();
  const perKey = (b: number) => Math.round((b / total) * 10) / 10;
  return {
    bytesPerKey: perKey(afterWrites.bytes),
    bytesPerKeyAfterRebuild: perKey(afterRebuild.bytes),
    usedMemoryBytesPerKey: perKey(usedAfterWrites),
    redisKeys: afterWrites.redisKeys,
    writesPerSec: Math.round(total / writeSeconds),
    rebuildSeconds: Math.round(rebuildSeconds * 100) / 100,
    lookupsPerSec: Math.round(total / readSeconds),
    verified: mismatches === 0 && size === total && rebuilt.keys === total,
    mismatches,
  };
}

try {
  const full = await measure('keys');
  const compact = await measure('compact');
  process.stdout.write(
    `${JSON.stringify({
      keys: total,
      compact,
      fullKey: full,
      ratio: Math.round((compact.bytesPerKey / full.bytesPerKey) * 1000) / 1000,
      limit: { bytesPerKey: LIMIT_BYTES_PER_KEY },
      withinLimit:
        compact.bytesPerKey <= LIMIT_BYTES_PER_KEY && compact.bytesPerKeyAfterRebuild <= LIMIT_BYTES_PER_KEY,
      verified: compact.verified && full.verified,
      loadAverage1m: Math.round(loadavg()[0]! * 10) / 10,
    })}\n`,
  );
  if (!(compact.verified && full.verified)) process.exitCode = 1;
} finally {
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (found.length > 0) await redis.unlink(...found);
  } while (cursor !== '0');
  await redis.quit();
}
