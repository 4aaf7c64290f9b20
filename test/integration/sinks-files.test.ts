import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSink } from '../../src/sync/sinks/create-sink.ts';
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
      `${join(tmp.dir, 'strict.csv')}: record(s) 2 of the batch have columns not in the CSV header (extra); the header is: a`,
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
