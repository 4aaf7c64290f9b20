import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCompactKeyIndex } from '../../src/sync/state/compact-key-index.ts';
import { createKeyIndex } from '../../src/sync/state/key-index.ts';
import { encodeEntry } from '../../src/sync/state/index-entry-codec.ts';
import { mapRecord } from '../../src/sync/mapping/map-record.ts';
import { validateMapping } from '../../src/sync/mapping/validate-mapping.ts';
import { deleteKeys, REDIS_URL } from '../helpers/sync-harness.ts';

const PREFIX = `rbtest-keyindex-${process.pid}`;

async function* rows(list: Array<[string, string]>) {
  await Promise.resolve();
  for (const [key, rowId] of list) yield { key, rowId };
}

const UUID = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** The key → row index: what upserts trust to find a row and to skip an unchanged one. */
describe.each(['keys', 'compact'] as const)('key index (%s format)', (format) => {
  let redis: Redis;
  let n = 0;
  const fresh = () => createKeyIndex({ redis, prefix: PREFIX, job: `job-${format}-${++n}`, format });

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await deleteKeys(`${PREFIX}:*`);
    await redis.quit();
  });

  it('stores, reads, removes and lists entries with their hashes; keys with separators survive', async () => {
    const index = fresh();
    await index.setMany(
      new Map([
        ['A-1', { rowId: 'r1', hash: 'h1' }],
        ['x\u001fy:z', { rowId: 'r2', hash: '' }],
      ]),
    );
    expect(await index.getMany(['A-1', 'x\u001fy:z', 'missing'])).toEqual(
      new Map([
        ['A-1', { rowId: 'r1', hash: 'h1' }],
        ['x\u001fy:z', { rowId: 'r2', hash: '' }],
      ]),
    );
    expect(await index.size()).toBe(2);
    await index.removeMany(['A-1']);
    expect(await index.getMany(['A-1', 'x\u001fy:z'])).toEqual(
      new Map([['x\u001fy:z', { rowId: 'r2', hash: '' }]]),
    );
    await index.clear();
    expect(await index.size()).toBe(0);
  });

  it('a rebuild keeps the hash of a key still on the same row, forgets it when the row changed, keeps the first of duplicate keys', async () => {
    const index = fresh();
    await index.setMany(
      new Map([
        ['K1', { rowId: 'r1', hash: 'h1' }],
        ['K2', { rowId: 'r2', hash: 'h2' }],
        ['K3', { rowId: 'r3', hash: 'h3' }],
      ]),
    );
    const result = await index.rebuild(
      rows([
        ['K1', 'r1'],
        ['K2', 'r2-new'],
        ['K1', 'r9'],
        ['K4', 'r4'],
      ]),
    );
    expect(result).toEqual({ keys: 3, duplicates: 1 });
    expect(await index.getMany(['K1', 'K2', 'K3', 'K4'])).toEqual(
      new Map([
        ['K1', { rowId: 'r1', hash: 'h1' }],
        ['K2', { rowId: 'r2-new', hash: '' }],
        ['K4', { rowId: 'r4', hash: '' }],
      ]),
    );
    // Nothing of the rebuild is left behind.
    expect(await redis.keys(`${PREFIX}:index:job-${format}-${n}:rebuild:*`)).toEqual([]);
  });

  it('calls with nothing to do are no-ops, not Redis errors', async () => {
    const index = fresh();
    await index.setMany(new Map([['K1', { rowId: 'r1', hash: 'h1' }]]));
    await index.setMany(new Map());
    await index.removeMany([]);
    expect((await index.getMany([])).size).toBe(0);
    expect(await index.getMany(['K1'])).toEqual(new Map([['K1', { rowId: 'r1', hash: 'h1' }]]));
  });

  it('a rebuild whose worksheet read fails leaves the index as it was and nothing of the rebuild behind', async () => {
    const index = fresh();
    await index.setMany(new Map([['K1', { rowId: 'r1', hash: 'h1' }]]));
    const before = new Set(await redis.keys(`${PREFIX}:*`));
    async function* failing() {
      await Promise.resolve();
      for (let i = 0; i < 1500; i++) yield { key: `N${i}`, rowId: `n${i}` };
      throw new Error('worksheet read failed');
    }
    await expect(index.rebuild(failing())).rejects.toThrow('worksheet read failed');
    expect(await index.getMany(['K1', 'N1'])).toEqual(new Map([['K1', { rowId: 'r1', hash: 'h1' }]]));
    expect(new Set(await redis.keys(`${PREFIX}:*`))).toEqual(before);
  });

  it('a rebuild from an empty worksheet empties the index', async () => {
    const index = fresh();
    await index.setMany(new Map([['K1', { rowId: 'r1', hash: 'h1' }]]));
    expect(await index.rebuild(rows([]))).toEqual({ keys: 0, duplicates: 0 });
    expect(await index.size()).toBe(0);
  });

  it('holds more than a thousand entries, with platform row ids and hashes, through a rebuild', async () => {
    const index = fresh();
    const many = Array.from({ length: 2_500 }, (_, i) => [`K${i}`, UUID(i)] as [string, string]);
    await index.setMany(
      new Map(many.map(([k, id], i) => [k, { rowId: id, hash: `hash${String(i).padStart(4, '0')}` }])),
    );
    expect(await index.rebuild(rows(many))).toEqual({ keys: 2_500, duplicates: 0 });
    expect(await index.size()).toBe(2_500);
    const got = await index.getMany(many.map(([k]) => k));
    expect(got.size).toBe(2_500);
    expect(got.get('K1234')).toEqual({ rowId: UUID(1234), hash: 'hash1234' });
    if (format === 'keys') {
      let count = 0;
      for await (const _entry of index.entries()) count += 1;
      expect(count).toBe(2_500);
    }
  });
});

describe('key index formats', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await deleteKeys(`${PREFIX}:*`);
    await redis.quit();
  });

  it('a mirror job switched to upsert: its full-key index becomes compact at the next rebuild, hashes kept, and is deleted', async () => {
    const job = 'job-migrate';
    const old = createKeyIndex({ redis, prefix: PREFIX, job });
    const hash = Buffer.from(Array.from({ length: 6 }, (_, i) => i * 11)).toString('base64url');
    await old.setMany(
      new Map([
        ['K1', { rowId: UUID(1), hash }],
        ['K2', { rowId: UUID(2), hash: 'h2' }],
      ]),
    );
    const compact = createKeyIndex({ redis, prefix: PREFIX, job, format: 'compact' });
    expect(
      await compact.rebuild(
        rows([
          ['K1', UUID(1)],
          ['K2', UUID(22)],
        ]),
      ),
    ).toEqual({ keys: 2, duplicates: 0 });
    expect(await compact.getMany(['K1', 'K2'])).toEqual(
      new Map([
        ['K1', { rowId: UUID(1), hash }],
        ['K2', { rowId: UUID(22), hash: '' }],
      ]),
    );
    expect(await redis.exists(`${PREFIX}:index:${job}`)).toBe(0);
    // And back: a job switched to mirror gets its full-key index, hashes carried again.
    const keys = createKeyIndex({ redis, prefix: PREFIX, job, format: 'keys' });
    await keys.rebuild(rows([['K1', UUID(1)]]));
    expect(await keys.getMany(['K1'])).toEqual(new Map([['K1', { rowId: UUID(1), hash }]]));
    expect(await redis.keys(`${PREFIX}:index2:${job}*`)).toEqual([]);
  });

  it('keeps the index where it says: full keys at prefix:index:job, compact under prefix:index2:job', async () => {
    const job = 'job-layout';
    // Full keys: key -> rowId SOH hash.
    await redis.hset(`${PREFIX}:index:${job}`, 'K1', `${UUID(1)}\u0001h1`, 'K2', `${UUID(2)}\u0001`);
    const keys = createKeyIndex({ redis, prefix: PREFIX, job, format: 'keys' });
    expect(await keys.getMany(['K1', 'K2'])).toEqual(
      new Map([
        ['K1', { rowId: UUID(1), hash: 'h1' }],
        ['K2', { rowId: UUID(2), hash: '' }],
      ]),
    );
    const compact = createKeyIndex({ redis, prefix: PREFIX, job, format: 'compact' });
    await compact.rebuild(rows([['K1', UUID(1)]]));
    expect((await redis.keys(`${PREFIX}:index2:${job}*`)).length).toBeGreaterThan(0);
    await compact.clear();
  });

  it('a job switched from mirror, before any rebuild, still finds the keys of its full-key index, and removes them from both', async () => {
    const job = 'job-resumed';
    const hash = Buffer.from(Array.from({ length: 6 }, (_, i) => 255 - i)).toString('base64url');
    await createKeyIndex({ redis, prefix: PREFIX, job }).setMany(
      new Map([
        ['OLD-1', { rowId: UUID(1), hash }],
        ['OLD-2', { rowId: UUID(2), hash: '' }],
      ]),
    );
    const compact = createKeyIndex({ redis, prefix: PREFIX, job, format: 'compact' });
    await compact.setMany(new Map([['NEW-3', { rowId: UUID(3), hash: 'AAAAAAAA' }]]));
    expect(await compact.getMany(['OLD-1', 'OLD-2', 'NEW-3', 'NONE'])).toEqual(
      new Map([
        ['OLD-1', { rowId: UUID(1), hash }],
        ['OLD-2', { rowId: UUID(2), hash: '' }],
        ['NEW-3', { rowId: UUID(3), hash: 'AAAAAAAA' }],
      ]),
    );
    await compact.removeMany(['OLD-1', 'NEW-3']);
    expect(await compact.getMany(['OLD-1', 'OLD-2', 'NEW-3'])).toEqual(
      new Map([['OLD-2', { rowId: UUID(2), hash: '' }]]),
    );
    await compact.clear();
    expect(await redis.keys(`${PREFIX}:index*:${job}*`)).toEqual([]);
  });

  it('the content hash the mapping makes is stored in its compact form: 22 bytes with a platform row id', () => {
    const plan = validateMapping(
      [{ target: 'sku', from: 'sku' }],
      { id: 'ws', name: 'Products', fields: [{ id: 'f_sku', name: 'SKU', alias: 'sku', type: 'Text' }] },
      { mode: 'upsert', key: 'sku' },
    );
    const mapped = mapRecord(plan, { sku: 'P-1' });
    if (!mapped.ok) throw new Error('mapping refused the row');
    expect(encodeEntry({ rowId: UUID(1), hash: mapped.hash })).toHaveLength(22);
  });

  it('keys whose digests collide never read each other’s rows: found in a rebuild or on a write, the later key keeps its full key', async () => {
    // Every key gets one digest: the worst case, far beyond what 64 bits allow.
    const index = createCompactKeyIndex({
      redis,
      base: `${PREFIX}:collide`,
      digest: () => Buffer.from('samedigest'),
    });
    expect(
      await index.rebuild(
        rows([
          ['A', UUID(1)],
          ['B', UUID(2)],
          ['C', UUID(3)],
        ]),
      ),
    ).toEqual({
      keys: 3,
      duplicates: 0,
    });
    expect(await index.info()).toMatchObject({ entries: 1, overflow: 2 });
    await index.setMany(new Map([['D', { rowId: UUID(4), hash: 'hD' }]]));
    await index.setMany(new Map([['B', { rowId: UUID(2), hash: 'hB' }]]));
    expect(await index.getMany(['A', 'B', 'C', 'D'])).toEqual(
      new Map([
        ['A', { rowId: UUID(1), hash: '' }],
        ['B', { rowId: UUID(2), hash: 'hB' }],
        ['C', { rowId: UUID(3), hash: '' }],
        ['D', { rowId: UUID(4), hash: 'hD' }],
      ]),
    );
    await index.removeMany(['A', 'C']);
    expect(await index.getMany(['A', 'B', 'C', 'D'])).toEqual(
      new Map([
        ['B', { rowId: UUID(2), hash: 'hB' }],
        ['D', { rowId: UUID(4), hash: 'hD' }],
      ]),
    );
    expect(await index.size()).toBe(2);
  });

  it('grows by splitting buckets as rows are created, every bucket a listpack', async () => {
    const index = createCompactKeyIndex({ redis, base: `${PREFIX}:grow` });
    for (let page = 0; page < 5; page++) {
      await index.setMany(
        new Map(
          Array.from({ length: 1000 }, (_, i) => [
            `K${page * 1000 + i}`,
            { rowId: UUID(page * 1000 + i), hash: 'AAAAAAAA' },
          ]),
        ),
      );
    }
    const info = await index.info();
    expect(info).toMatchObject({ entries: 5000, overflow: 0 });
    expect(info!.buckets).toBeGreaterThan(5000 / 128);
    const encodings = new Set<string>();
    for (let b = 0; b < info!.buckets; b++)
      encodings.add(String(await redis.object('ENCODING', `${PREFIX}:grow:${info!.gen}:b:${b}`)));
    expect([...encodings]).toEqual(['listpack']);
    const got = await index.getMany(Array.from({ length: 5000 }, (_, i) => `K${i}`));
    expect(got.size).toBe(5000);
    expect(got.get('K4321')).toEqual({ rowId: UUID(4321), hash: 'AAAAAAAA' });
    await index.clear();
    expect(await redis.keys(`${PREFIX}:grow*`)).toEqual([]);
  });
});
