import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSink } from '../../src/sync/sinks/create-sink.ts';
import type { SinkWriteMode } from '../../src/sync/sinks/sink-spec.ts';
import { pullSinkOptions } from '../../src/sync/sinks/sink-mode.ts';
import { createSource } from '../../src/sync/sources/create-source.ts';
import { collect, createTempDir, rejection } from '../fixtures/sources/source-test-kit.ts';

let tmp: Awaited<ReturnType<typeof createTempDir>>;
beforeAll(async () => {
  tmp = await createTempDir('sinks');
});
afterAll(async () => {
  await tmp.remove();
});

const deps = () => ({ env: {}, baseDir: tmp.dir });
const readBack = async (type: 'csv' | 'ndjson', path: string) =>
  (await collect(createSource({ type, path }, deps()))).map((i) => i.data);

describe('csv sink', () => {
  it('round-trips awkward values through the csv source, across several writes', async () => {
    const sink = createSink({ type: 'csv', path: 'out/rows.csv' }, deps());
    await sink.write([
      { id: 1, name: 'Smith, Jo', note: 'said "hi"', tags: ['a', 'b'] },
      { id: 2, name: 'Zoë 🚀', note: 'two\nlines\r\nthree', tags: null },
    ]);
    await sink.write(
      [{ id: 3, name: ' padded ', note: '', when: undefined, tags: { k: true } }].map(
        ({ when: _w, ...r }) => r,
      ),
    );
    await sink.write([{ id: 4, name: 'date', note: new Date('2024-05-06T07:08:09.010Z'), tags: 3.5 }]);
    await sink.close();
    expect(await readBack('csv', 'out/rows.csv')).toEqual([
      { id: '1', name: 'Smith, Jo', note: 'said "hi"', tags: '["a","b"]' },
      { id: '2', name: 'Zoë 🚀', note: 'two\nlines\r\nthree', tags: '' },
      { id: '3', name: ' padded ', note: '', tags: '{"k":true}' },
      { id: '4', name: 'date', note: '2024-05-06T07:08:09.010Z', tags: '3.5' },
    ]);
  });

  it('appends to an existing file under its header, in its column order', async () => {
    const first = createSink({ type: 'csv', path: 'append.csv', delimiter: ';' }, deps());
    await first.write([{ a: 'x;1', b: '2' }]);
    await first.close();
    const second = createSink({ type: 'csv', path: 'append.csv', delimiter: ';' }, deps());
    await second.write([{ b: '4', a: '3' }, { a: '5' }]);
    await second.close();
    expect(await readFile(join(tmp.dir, 'append.csv'), 'utf8')).toBe('a;b\n"x;1";2\n3;4\n5;\n');
  });

  it('rejects records with columns the header lacks, naming them, and writes none of that batch', async () => {
    const sink = createSink({ type: 'csv', path: 'strict.csv' }, deps());
    await sink.write([{ a: 1 }]);
    const err = await rejection(sink.write([{ a: 2 }, { a: 3, extra: 'x' }]));
    expect(err.code).toBe('SINK_INVALID_RECORD');
    expect((err as unknown as { recordIndexes: number[] }).recordIndexes).toEqual([1]);
    expect(err.message).toBe(
      `${join(tmp.dir, 'strict.csv')}: row(s) 3 of this run have columns not in the CSV header (extra); the header is: a`,
    );
    await sink.write([{ a: 4 }]);
    await sink.close();
    expect(await readBack('csv', 'strict.csv')).toEqual([{ a: '1' }, { a: '4' }]);
  });

  it('keeps an empty value of a one-column file and keeps overlapping writes in call order', async () => {
    const sink = createSink({ type: 'csv', path: 'one.csv' }, deps());
    const writes = [sink.write([{ v: 'first' }]), sink.write([{ v: '' }]), sink.write([{ v: 'last' }])];
    await Promise.all(writes);
    await sink.close();
    expect(await readBack('csv', 'one.csv')).toEqual([{ v: 'first' }, { v: '' }, { v: 'last' }]);
    await expect(sink.write([{ v: 'late' }])).rejects.toThrow('write after close');
  });
});

describe('ndjson sink', () => {
  it('round-trips records through the ndjson source', async () => {
    const sink = createSink({ type: 'ndjson', path: 'rows.ndjson' }, deps());
    const records = [
      { id: 1, nested: { list: [1, 'two', null] }, text: 'line\nbreak \u2028 "q"' },
      { id: 2, big: 12345678901234567890n, at: new Date('2024-01-01T00:00:00Z') },
    ];
    await sink.write([records[0]!]);
    await sink.write([records[1]!]);
    await sink.close();
    expect(await readFile(join(tmp.dir, 'rows.ndjson'), 'utf8')).not.toMatch(/[\u2028\u2029]/);
    expect(await readBack('ndjson', 'rows.ndjson')).toEqual([
      records[0],
      { id: 2, big: '12345678901234567890', at: '2024-01-01T00:00:00.000Z' },
    ]);
  });
});

describe('file sinks: replace, merge by key, and what a failed or dead run leaves', () => {
  const asideFiles = async () => (await readdir(tmp.dir)).filter((name) => name.includes('.rowbridge-'));
  const sinkOf = (type: 'csv' | 'ndjson', path: string, write: SinkWriteMode, key?: string[]) =>
    createSink({ type, path, ...(key === undefined ? {} : { key }) }, { ...deps(), write });
  const ids = async (type: 'csv' | 'ndjson', path: string) =>
    (await readBack(type, path)).map((r) => `${String(r.id)}:${String(r.v)}`);

  it('replace writes aside: the old file stays whole until close, and an aborted run leaves it', async () => {
    const first = sinkOf('csv', 'full.csv', 'replace');
    await first.write([
      { id: 'a', v: 1 },
      { id: 'b', v: 1 },
      { id: 'c', v: 1 },
    ]);
    await first.close();
    const before = await readFile(join(tmp.dir, 'full.csv'), 'utf8');

    const failed = sinkOf('csv', 'full.csv', 'replace');
    await failed.write([{ id: 'x', v: 2 }]);
    expect(await readFile(join(tmp.dir, 'full.csv'), 'utf8')).toBe(before);
    expect(await asideFiles()).toHaveLength(1);
    await failed.abort();
    expect(await readFile(join(tmp.dir, 'full.csv'), 'utf8')).toBe(before);
    expect(await asideFiles()).toEqual([]);

    const second = sinkOf('csv', 'full.csv', 'replace');
    await second.write([{ id: 'x', v: 2 }]);
    await second.write([{ id: 'y', v: 2 }]);
    await second.close();
    expect(await ids('csv', 'full.csv')).toEqual(['x:2', 'y:2']);
    expect(await asideFiles()).toEqual([]);
  });

  for (const type of ['csv', 'ndjson'] as const) {
    it(`merge replaces the rows whose key comes again and keeps the others (${type}); a re-run adds nothing`, async () => {
      const path = `merge.${type}`;
      const seed = sinkOf(type, path, 'replace', ['id']);
      await seed.write([
        { id: 'k1', v: 'old' },
        { id: 'k2', v: 'old' },
        { id: 'k3', v: 'old' },
      ]);
      await seed.close();
      for (let run = 0; run < 2; run++) {
        const sink = sinkOf(type, path, 'merge', ['id']);
        await sink.write([{ id: 'k2', v: 'new' }]);
        await sink.write([{ id: 'k4', v: 'new' }]);
        await sink.close();
        expect(await ids(type, path)).toEqual(['k1:old', 'k3:old', 'k2:new', 'k4:new']);
      }
      expect(await asideFiles()).toEqual([]);
    });

    it(`holds a key the run brings twice once, the last record winning (${type})`, async () => {
      const sink = sinkOf(type, `twice.${type}`, 'replace', ['id']);
      await sink.write([
        { id: 'a', v: 1 },
        { id: 'b', v: 1 },
      ]);
      await sink.write([
        { id: 'a', v: 2 },
        { id: 'c', v: 1 },
      ]);
      await sink.close();
      expect(await ids(type, `twice.${type}`)).toEqual(['b:1', 'a:2', 'c:1']);
    });
  }

  it('merges on a combined key and keeps CSV cells, quotes and escapes exactly as written', async () => {
    const seed = sinkOf('csv', 'combo.csv', 'merge', ['id', 'region']);
    await seed.write([
      { id: 1, region: 'eu', v: '=SUM(A1)' },
      { id: 1, region: 'us', v: 'a,"b"\nc' },
    ]);
    await seed.close();
    const sink = sinkOf('csv', 'combo.csv', 'merge', ['id', 'region']);
    await sink.write([{ id: 1, region: 'eu', v: 'new' }]);
    await sink.close();
    expect(await readFile(join(tmp.dir, 'combo.csv'), 'utf8')).toBe(
      'id,region,v\n1,us,"a,""b""\nc"\n1,eu,new\n',
    );
  });

  it('leaves the previous file when a process dies mid-run; the next run clears its aside file', async () => {
    const seed = sinkOf('ndjson', 'dead.ndjson', 'replace', ['id']);
    await seed.write([{ id: 'a', v: 1 }]);
    await seed.close();
    // What a killed worker leaves: half a run in an aside file, the target untouched.
    await tmp.write('.dead.ndjson.rowbridge-99999-deadbeef.tmp', '{"id":"a","v":9}\n{"id":"b",');
    expect(await ids('ndjson', 'dead.ndjson')).toEqual(['a:1']);
    const next = sinkOf('ndjson', 'dead.ndjson', 'merge', ['id']);
    await next.write([{ id: 'b', v: 2 }]);
    await next.close();
    expect(await ids('ndjson', 'dead.ndjson')).toEqual(['a:1', 'b:2']);
    expect(await asideFiles()).toEqual([]);
  });

  it('a worker killed (SIGKILL) mid-run leaves the previous file byte for byte', async () => {
    const seed = sinkOf('csv', 'killed.csv', 'replace', ['id']);
    await seed.write([
      { id: 'a', v: 1 },
      { id: 'b', v: 1 },
    ]);
    await seed.close();
    const before = await readFile(join(tmp.dir, 'killed.csv'), 'utf8');
    // A real process writes two batches of a full pull, then dies without closing.
    const script = `
      import { createSink } from ${JSON.stringify(new URL('../../src/sync/sinks/create-sink.ts', import.meta.url).href)};
      const sink = createSink({ type: 'csv', path: 'killed.csv', key: 'id' }, { env: {}, baseDir: ${JSON.stringify(tmp.dir)}, write: 'replace' });
      await sink.write([{ id: 'x', v: 2 }]);
      await sink.write([{ id: 'y', v: 2 }]);
      process.kill(process.pid, 'SIGKILL');`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.signal).toBe('SIGKILL');
    expect(await readFile(join(tmp.dir, 'killed.csv'), 'utf8')).toBe(before);
    expect(await asideFiles()).toHaveLength(1);
    const next = sinkOf('csv', 'killed.csv', 'replace', ['id']);
    await next.write([{ id: 'x', v: 3 }]);
    await next.close();
    expect(await ids('csv', 'killed.csv')).toEqual(['x:3']);
    expect(await asideFiles()).toEqual([]);
  });

  it('an empty full pull empties the file; an empty incremental pull leaves it', async () => {
    await tmp.write('empty.ndjson', '{"id":"a","v":1}\n');
    await sinkOf('ndjson', 'empty.ndjson', 'merge', ['id']).close();
    expect(await ids('ndjson', 'empty.ndjson')).toEqual(['a:1']);
    await sinkOf('ndjson', 'empty.ndjson', 'replace', ['id']).close();
    expect(await readFile(join(tmp.dir, 'empty.ndjson'), 'utf8')).toBe('');
  });

  it('names the file, the rows and the key column when records have no key, and a merge without a key', async () => {
    const sink = sinkOf('csv', 'nokey.csv', 'replace', ['id']);
    await sink.write([{ id: 'a' }, { id: 'b' }]);
    const err = await rejection(sink.write([{ id: 'c' }, { id: '' }, { id: null }]));
    expect(err.code).toBe('SINK_INVALID_RECORD');
    expect(err.message).toBe(
      `${join(tmp.dir, 'nokey.csv')}: row(s) 4, 5 of this run have no value in the key column(s) id (sink.key); every row needs one, as the file holds each key once`,
    );
    await sink.abort();
    const merge = sinkOf('ndjson', 'nokey.ndjson', 'merge');
    const config = await rejection(merge.write([{ id: 'a' }]));
    expect(config.code).toBe('SINK_CONFIG');
    expect(config.message).toMatch(
      /nokey\.ndjson: an incremental pull merges into the file by key.*set sink\.key/,
    );
    await merge.abort();
  });
});

describe('pullSinkOptions', () => {
  it('replaces on a full pull, merges on an incremental one, keyed by the column mapped from rowid', () => {
    const mappings = [
      { target: 'code', from: 'code' },
      { target: 'row', from: 'rowid' },
    ];
    expect(pullSinkOptions({ mappings })).toEqual({ write: 'replace', key: ['row'] });
    expect(pullSinkOptions({ mappings, incremental: { cursor: '_updatedAt' } })).toEqual({
      write: 'merge',
      key: ['row'],
    });
    expect(pullSinkOptions({ mappings: [{ target: 'code', from: 'code' }] })).toEqual({ write: 'replace' });
  });
});
