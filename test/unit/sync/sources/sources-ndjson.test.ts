import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createSource } from '../../../../src/sync/sources/create-source.ts';
import { collect, createTempDir } from '../../../fixtures/sources/source-test-kit.ts';

let tmp: Awaited<ReturnType<typeof createTempDir>>;
beforeAll(async () => {
  tmp = await createTempDir('ndjson');
});
afterAll(async () => {
  await tmp.remove();
});

const read = (path: string, extra: { since?: unknown; cursorField?: string } = {}) =>
  collect(createSource({ type: 'ndjson', path }, { env: {}, baseDir: tmp.dir, ...extra }));

describe('ndjson source', () => {
  it('reads one object per line, skipping blank lines and a BOM, with line numbers', async () => {
    await tmp.write('a.ndjson', '\uFEFF{"id":1,"tags":["x"]}\r\n\r\n   \n{"id":2,"n":{"deep":true}}\n');
    const items = await read('a.ndjson');
    expect(items.map((i) => [i.data, i.position])).toEqual([
      [
        { id: 1, tags: ['x'] },
        { index: 0, line: 1 },
      ],
      [
        { id: 2, n: { deep: true } },
        { index: 1, line: 4 },
      ],
    ]);
  });

  it('keeps U+2028 and U+2029 inside strings on their line, and reads long lines whole', async () => {
    const long = 'x'.repeat(300_000);
    await tmp.write('sep.ndjson', `{"t":"a\u2028b\u2029c"}\n{"long":"${long}"}\n{"id":3}`);
    const items = await read('sep.ndjson');
    expect(items.map((i) => i.data)).toEqual([{ t: 'a\u2028b\u2029c' }, { long }, { id: 3 }]);
    expect(items.map((i) => i.position.line)).toEqual([1, 2, 3]);
  });

  it('yields bad lines as invalid records naming file and line, and reads on', async () => {
    await tmp.write('bad.ndjson', '{"id":1}\n{"id":\n[1,2]\n"text"\n{"id":5}\n');
    const items = await read('bad.ndjson');
    expect(items.map((i) => i.data)).toEqual([{ id: 1 }, {}, {}, {}, { id: 5 }]);
    const file = join(tmp.dir, 'bad.ndjson');
    expect(items[1]?.error?.message).toMatch(new RegExp(`^${file} line 2: not valid JSON`));
    expect(items[2]?.error?.message).toBe(`${file} line 3: expected a JSON object, found an array`);
    expect(items[3]?.error?.message).toBe(`${file} line 4: expected a JSON object, found a string`);
    expect(items[4]?.position).toEqual({ index: 4, line: 5 });
  });

  it('stops between records once the signal is aborted', async () => {
    await tmp.write('abort.ndjson', '{"id":1}\n{"id":2}\n{"id":3}\n');
    const controller = new AbortController();
    const seen: unknown[] = [];
    const reading = (async () => {
      for await (const item of createSource(
        { type: 'ndjson', path: 'abort.ndjson' },
        { env: {}, baseDir: tmp.dir, signal: controller.signal },
      )) {
        seen.push(item.data.id);
        controller.abort();
      }
    })();
    await expect(reading).rejects.toThrow(/abort/i);
    expect(seen).toEqual([1]);
  });

  it('filters by the incremental cursor and sets record.cursor', async () => {
    await tmp.write('inc.ndjson', '{"id":1,"v":5}\n{"id":2,"v":7}\n{"id":3,"v":6}\n');
    const items = await read('inc.ndjson', { since: 5, cursorField: 'v' });
    expect(items.map((i) => [i.data.id, i.cursor])).toEqual([
      [2, 7],
      [3, 6],
    ]);
  });
});
