import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyIndex } from '../../src/sync/state/key-index.ts';
import { deleteKeys, REDIS_URL } from '../helpers/sync-harness.ts';

const PREFIX = `rbtest-keyindex-${process.pid}`;

async function* rows(list: Array<[string, string]>) {
  await Promise.resolve();
  for (const [key, rowId] of list) yield { key, rowId };
}

/** The key → row index: what upserts trust to find a row and to skip an unchanged one. */
describe('key index', () => {
  let redis: Redis;
  let n = 0;
  const fresh = () => createKeyIndex({ redis, prefix: PREFIX, job: `job-${++n}` });

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
    const all = [];
    for await (const entry of index.entries()) all.push(entry);
    expect(all).toEqual([['x\u001fy:z', { rowId: 'r2', hash: '' }]]);
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
    expect(await redis.keys(`${PREFIX}:index:job-${n}:rebuild:*`)).toEqual([]);
  });

  it('a rebuild from an empty worksheet empties the index', async () => {
    const index = fresh();
    await index.setMany(new Map([['K1', { rowId: 'r1', hash: 'h1' }]]));
    expect(await index.rebuild(rows([]))).toEqual({ keys: 0, duplicates: 0 });
    expect(await index.size()).toBe(0);
  });

  it('pages through more than a thousand entries', async () => {
    const index = fresh();
    const many = Array.from({ length: 2_500 }, (_, i) => [`K${i}`, `r${i}`] as [string, string]);
    expect(await index.rebuild(rows(many))).toEqual({ keys: 2_500, duplicates: 0 });
    let count = 0;
    for await (const _entry of index.entries()) count += 1;
    expect(count).toBe(2_500);
  });
});
