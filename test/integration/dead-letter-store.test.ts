import { Redis } from 'ioredis';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { ErrorCategory } from '../../src/ground/errors.ts';
import { createDeadLetterStore } from '../../src/sync/state/dead-letter-store.ts';
import type { DeadLetterEntry, DeadLetterInput } from '../../src/sync/state/dead-letter-entry.ts';
import type { DeadLetterStore } from '../../src/sync/state/dead-letter-store.ts';
import { MAX_VALUE_BYTES, TRUNCATION_MARKER } from '../../src/sync/state/dead-letter-sanitise.ts';

const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true });
const PREFIX = `rbtest-dlq-${process.pid}`;
const T0 = Date.parse('2024-05-01T10:00:00.000Z');

async function deleteKeys(pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

async function keysOf(prefix: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    out.push(...keys);
  } while (cursor !== '0');
  return out.sort();
}

function entry(runId: string, index: number, over: Partial<DeadLetterInput> = {}): DeadLetterInput {
  return {
    id: `${runId}:${index}`,
    job: 'orders',
    runId,
    category: 'invalid-row',
    errorCode: 430019,
    message: `field "email" is required (row ${index})`,
    field: 'email',
    source: { data: { name: `row ${index}`, email: '' }, position: { index, line: index + 2 } },
    payload: [{ id: 'name', value: `row ${index}` }],
    attempts: 1,
    createdAt: new Date(T0 + index * 1000).toISOString(),
    ...over,
  };
}

/**
 * Every entry sits in exactly its four indexes with score = createdAt ms, and every
 * index member has an entry: what "indexes never disagree with entries" means.
 */
async function expectConsistent(prefix: string): Promise<number> {
  const base = `${prefix}:dlq:`;
  const raw = await redis.hgetall(`${base}entries`);
  const entries = Object.values(raw).map((json) => JSON.parse(json) as DeadLetterEntry);
  const expected = new Map<string, Map<string, number>>();
  const put = (key: string, e: DeadLetterEntry) => {
    const set = expected.get(key) ?? new Map<string, number>();
    set.set(e.id, Date.parse(e.createdAt));
    expected.set(key, set);
  };
  for (const e of entries) {
    put(`${base}all`, e);
    put(`${base}cat:${e.category}`, e);
    put(`${base}job:${e.job}`, e);
    put(`${base}run:${e.runId}`, e);
  }
  const indexKeys = (await keysOf(prefix)).filter((key) => key !== `${base}entries`);
  expect(indexKeys.sort()).toEqual([...expected.keys()].sort());
  for (const key of indexKeys) {
    const flat = await redis.zrange(key, '0', '-1', 'WITHSCORES');
    const actual = new Map<string, number>();
    for (let i = 0; i < flat.length; i += 2) actual.set(flat[i]!, Number(flat[i + 1]));
    expect(actual, key).toEqual(expected.get(key));
  }
  return entries.length;
}

afterAll(async () => {
  await deleteKeys(`${PREFIX}:*`);
  await deleteKeys(`{${PREFIX}}:*`);
  await redis.quit();
});

describe('dead-letter store', () => {
  let store: DeadLetterStore;

  beforeEach(async () => {
    if (redis.status === 'wait') await redis.connect();
    await deleteKeys(`${PREFIX}:*`);
    store = createDeadLetterStore({ redis, prefix: PREFIX, now: () => T0 + 999_000 });
  });

  it('adds entries and gets them back whole, keyed under <prefix>:dlq:', async () => {
    const input = entry('run1', 3, {
      source: { data: { n: 1, when: '2024-01-01' }, position: { index: 3, line: 5, id: 'pk-9' }, cursor: 17 },
    });
    expect(await store.add([input])).toBe(1);
    expect(await store.get('run1:3')).toEqual(input);
    expect(await store.get('run1:4')).toBeUndefined();
    const keys = await keysOf(PREFIX);
    expect(keys.every((key) => key.startsWith(`${PREFIX}:dlq:`))).toBe(true);
    expect(keys).toEqual(
      [
        `${PREFIX}:dlq:all`,
        `${PREFIX}:dlq:cat:invalid-row`,
        `${PREFIX}:dlq:entries`,
        `${PREFIX}:dlq:job:orders`,
        // The row index: the entry's source id finds it when that row lands later.
        `${PREFIX}:dlq:row:orders`,
        `${PREFIX}:dlq:run:run1`,
      ].sort(),
    );
  });

  it('stamps createdAt with the clock when the caller leaves it out', async () => {
    const { createdAt: _ignored, ...withoutTime } = entry('run1', 0);
    await store.add([withoutTime]);
    expect((await store.get('run1:0'))?.createdAt).toBe(new Date(T0 + 999_000).toISOString());
  });

  it('is idempotent: an id already stored is kept as it was and not counted again', async () => {
    expect(await store.add([entry('run1', 0), entry('run1', 1), entry('run1', 1)])).toBe(2);
    expect(
      await store.add([
        entry('run1', 1, { message: 'second attempt', category: 'conflict' }),
        entry('run1', 2),
      ]),
    ).toBe(1);
    expect((await store.get('run1:1'))?.message).toBe('field "email" is required (row 1)');
    expect(await store.counts()).toEqual({ 'invalid-row': 3 });
    expect(await expectConsistent(PREFIX)).toBe(3);
  });

  it('rejects a malformed entry, naming it and what is allowed, and stores nothing of the batch', async () => {
    await expect(
      store.add([entry('run1', 0), entry('run1', 1, { category: 'bogus' as ErrorCategory })]),
    ).rejects.toThrow(/entry "run1:1": category "bogus" is not one of throttled, transient/);
    await expect(store.add([entry('run1', 2, { id: 'run1:99' })])).rejects.toThrow(
      /entry "run1:99": id must be "<runId>:<source.position.index>", here "run1:2"/,
    );
    await expect(store.add([entry('run1', 3, { attempts: -1 })])).rejects.toThrow(
      /attempts must be a whole number/,
    );
    await expect(store.add([entry('run1', 4, { createdAt: 'yesterday' })])).rejects.toThrow(
      /createdAt must be an ISO timestamp/,
    );
    expect(await keysOf(PREFIX)).toEqual([]);
  });

  it('cuts a huge single value with a marker and keeps small values as they are', async () => {
    const huge = 'x'.repeat(50_000);
    const deep: unknown = JSON.parse(`${'['.repeat(60)}1${']'.repeat(60)}`);
    await store.add([
      entry('run1', 0, {
        source: { data: { small: 'ok', huge, blob: { text: huge }, deep }, position: { index: 0 } },
        payload: [{ id: 'notes', value: huge }],
        message: `cannot read postgres://sync:hunter2@db.internal:5432/erp (Bearer abc.def.ghi)`,
      }),
    ]);
    const stored = (await store.get('run1:0'))!;
    const cut = stored.source.data['huge'] as string;
    expect(cut.startsWith('x'.repeat(1000))).toBe(true);
    expect(cut).toContain(`${TRUNCATION_MARKER} 50000 bytes]`);
    expect(Buffer.byteLength(cut)).toBeLessThan(MAX_VALUE_BYTES + 100);
    expect(typeof stored.source.data['blob']).toBe('string');
    expect(stored.source.data['blob']).toContain(TRUNCATION_MARKER);
    expect(typeof stored.source.data['deep']).toBe('string');
    expect(stored.source.data['small']).toBe('ok');
    expect(stored.payload?.[0]?.value).toContain(TRUNCATION_MARKER);
    expect(stored.message).not.toContain('hunter2');
    expect(stored.message).not.toContain('abc.def.ghi');
    expect(stored.message).toContain('db.internal:5432/erp');
    expect(await redis.hstrlen(`${PREFIX}:dlq:entries`, 'run1:0')).toBeLessThan(4 * MAX_VALUE_BYTES);
    // The entry stays removable: the remove script decodes it in Lua.
    expect(await store.remove(['run1:0'])).toBe(1);
  });

  it('keeps an entry with broken Unicode in its data readable and removable', async () => {
    const broken = `bad \ud800 text`;
    await store.add([
      entry('run1', 0, {
        message: `cannot map ${broken}`,
        source: { data: { [`key\udfff`]: broken, nested: { deeper: [broken] } }, position: { index: 0 } },
      }),
    ]);
    const stored = (await store.get('run1:0'))!;
    expect(stored.source.data['key\ufffd']).toBe('bad \ufffd text');
    expect(stored.source.data['nested']).toEqual({ deeper: ['bad \ufffd text'] });
    expect(stored.message).toBe('cannot map bad \ufffd text');
    expect(await store.remove(['run1:0'])).toBe(1);
    expect(await keysOf(PREFIX)).toEqual([]);
    await expect(store.add([entry('run1', 1, { job: 'or\ud800ders' })])).rejects.toThrow(
      /entry "run1:1": job must be a non-empty string of valid Unicode text/,
    );
  });

  it('lists newest first and pages through everything exactly once, ties included', async () => {
    // 30 entries, ten per second: ties on createdAt are broken by id.
    await store.add(
      Array.from({ length: 30 }, (_, i) =>
        entry('run1', i, { createdAt: new Date(T0 + Math.floor(i / 10) * 1000).toISOString() }),
      ),
    );
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.list({ limit: 7, ...(cursor === undefined ? {} : { cursor }) });
      seen.push(...page.entries.map((e) => e.id));
      cursor = page.next;
      pages += 1;
    } while (cursor !== undefined);
    expect(pages).toBe(5);
    expect(new Set(seen).size).toBe(30);
    const times = await Promise.all(seen.map(async (id) => Date.parse((await store.get(id))!.createdAt)));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(seen.slice(0, 10).every((id) => Number(id.split(':')[1]) >= 20)).toBe(true);
  });

  it('keeps paging right when the entry under the cursor is removed between pages', async () => {
    await store.add(
      Array.from({ length: 20 }, (_, i) => entry('run1', i, { createdAt: new Date(T0).toISOString() })),
    );
    const first = await store.list({ limit: 5 });
    await store.remove(first.entries.map((e) => e.id));
    const seen = first.entries.map((e) => e.id);
    let cursor = first.next;
    while (cursor !== undefined) {
      const page = await store.list({ limit: 5, cursor });
      seen.push(...page.entries.map((e) => e.id));
      await store.remove([page.entries.at(-1)!.id]);
      cursor = page.next;
    }
    expect(seen).toHaveLength(20);
    expect(new Set(seen).size).toBe(20);
  });

  it('filters by category, job and run, alone and together', async () => {
    await store.add([
      entry('r1', 0),
      entry('r1', 1, { category: 'conflict' }),
      entry('r2', 0, { job: 'invoices' }),
      entry('r2', 1, { job: 'invoices', category: 'conflict' }),
      entry('r3', 0, { job: 'invoices', category: 'conflict' }),
    ]);
    const ids = async (filter: Parameters<DeadLetterStore['list']>[0]) =>
      (await store.list(filter)).entries.map((e) => e.id).sort();
    expect(await ids({ category: 'conflict' })).toEqual(['r1:1', 'r2:1', 'r3:0']);
    expect(await ids({ job: 'invoices' })).toEqual(['r2:0', 'r2:1', 'r3:0']);
    expect(await ids({ runId: 'r2' })).toEqual(['r2:0', 'r2:1']);
    expect(await ids({ job: 'invoices', category: 'conflict' })).toEqual(['r2:1', 'r3:0']);
    expect(await ids({ job: 'invoices', runId: 'r2', category: 'invalid-row' })).toEqual(['r2:0']);
    expect(await ids({ job: 'nope' })).toEqual([]);
    await expect(store.list({ category: 'bogus' as ErrorCategory })).rejects.toThrow(
      /unknown category "bogus"; categories: throttled/,
    );
  });

  it('pages a combined filter without losing matches spread between non-matching entries', async () => {
    await store.add(
      Array.from({ length: 40 }, (_, i) =>
        entry('r1', i, { category: i % 4 === 0 ? 'conflict' : 'invalid-row' }),
      ),
    );
    const first = await store.list({ job: 'orders', category: 'conflict', limit: 4 });
    expect(first.next).toBeDefined();
    const second = await store.list({ job: 'orders', category: 'conflict', limit: 20, cursor: first.next! });
    expect(second.next).toBeUndefined();
    expect([...first.entries, ...second.entries].map((e) => e.id).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `r1:${i * 4}`).sort(),
    );
  });

  it('rejects a cursor it did not hand out', async () => {
    await expect(store.list({ cursor: 'not-a-cursor' })).rejects.toThrow(/invalid list cursor/);
  });

  it('removes entries from every index and counts only those that existed', async () => {
    await store.add([
      entry('r1', 0),
      entry('r1', 1, { category: 'conflict' }),
      entry('r2', 0, { job: 'invoices' }),
    ]);
    expect(await store.remove(['r1:1', 'r2:0', 'missing:0', 'r1:1'])).toBe(2);
    expect(await expectConsistent(PREFIX)).toBe(1);
    expect(await store.counts()).toEqual({ 'invalid-row': 1 });
    expect((await store.list({ job: 'invoices' })).entries).toEqual([]);
  });

  it('counts by category, overall and within a job or run', async () => {
    await store.add([
      entry('r1', 0),
      entry('r1', 1, { category: 'conflict' }),
      entry('r1', 2, { category: 'conflict' }),
      entry('r2', 0, { job: 'invoices', category: 'conflict' }),
    ]);
    expect(await store.counts()).toEqual({ 'invalid-row': 1, conflict: 3 });
    expect(await store.counts({ job: 'orders' })).toEqual({ 'invalid-row': 1, conflict: 2 });
    expect(await store.counts({ runId: 'r2' })).toEqual({ conflict: 1 });
    expect(await store.counts({ job: 'invoices', runId: 'r1' })).toEqual({});
  });

  it('purges by filter and keeps the indexes consistent', async () => {
    await store.add([
      ...Array.from({ length: 30 }, (_, i) =>
        entry('r1', i, { category: i % 3 === 0 ? 'conflict' : 'invalid-row' }),
      ),
      ...Array.from({ length: 10 }, (_, i) => entry('r2', i, { job: 'invoices', category: 'conflict' })),
    ]);
    expect(await store.purge({ job: 'orders', category: 'conflict' })).toBe(10);
    expect(await expectConsistent(PREFIX)).toBe(30);
    expect(await store.counts({ job: 'orders' })).toEqual({ 'invalid-row': 20 });
    expect(await store.purge({ runId: 'r2' })).toBe(10);
    expect(await expectConsistent(PREFIX)).toBe(20);
    expect(await store.purge({ category: 'throttled' })).toBe(0);
    expect(await store.purge()).toBe(20);
    expect(await keysOf(PREFIX)).toEqual([]);
  });

  it('iterates 2,500 entries oldest first, each once, even while removing what it yielded', async () => {
    const all = Array.from({ length: 2500 }, (_, i) =>
      entry(`r${i % 2}`, i, {
        category: i % 5 === 0 ? 'conflict' : 'invalid-row',
        createdAt: new Date(T0 + Math.floor(i / 300) * 1000).toISOString(),
      }),
    );
    expect(await store.add(all)).toBe(2500);
    let conflicts = 0;
    for await (const e of store.iterate({ category: 'conflict' })) {
      expect(e.category).toBe('conflict');
      conflicts += 1;
    }
    expect(conflicts).toBe(500);

    const seen = new Set<string>();
    let last = -Infinity;
    for await (const e of store.iterate()) {
      const t = Date.parse(e.createdAt);
      expect(t).toBeGreaterThanOrEqual(last);
      last = t;
      seen.add(e.id);
      // What a replay does: drop each dead letter once it has been re-sent.
      if (seen.size % 2 === 0) await store.remove([e.id]);
    }
    expect(seen.size).toBe(2500);
    expect(await expectConsistent(PREFIX)).toBe(1250);
  });

  it('removes entries older than the retention window as new ones arrive, keeping the indexes consistent', async () => {
    const day = 86_400_000;
    const aged = createDeadLetterStore({
      redis,
      prefix: PREFIX,
      now: () => T0 + 40 * day,
      retentionMs: 30 * day,
    });
    await aged.add([entry('old', 0), entry('old', 1)]);
    // Both were created at T0: 40 days ago by this clock, past the 30-day window: pruned on add.
    expect(await aged.get('old:0')).toBeUndefined();
    await aged.add([entry('new', 0, { createdAt: new Date(T0 + 39 * day).toISOString() })]);
    expect(await aged.get('new:0')).toBeDefined();
    expect(await aged.prune()).toBe(0);
    expect(await expectConsistent(PREFIX)).toBe(1);
  });

  it('works under a braced Redis Cluster hash-tag prefix', async () => {
    const tagged = createDeadLetterStore({ redis, prefix: `{${PREFIX}}`, now: () => T0 + 999_000 });
    await tagged.add([entry('r1', 0), entry('r1', 1, { category: 'conflict' })]);
    expect((await keysOf(`{${PREFIX}}`)).every((key) => key.startsWith(`{${PREFIX}}:dlq:`))).toBe(true);
    expect(await tagged.counts()).toEqual({ 'invalid-row': 1, conflict: 1 });
    expect(await expectConsistent(`{${PREFIX}}`)).toBe(2);
    expect(await tagged.purge()).toBe(2);
    expect(await keysOf(`{${PREFIX}}`)).toEqual([]);
  });
});
