import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CsvError } from 'csv-parse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSource } from '../../../../src/sync/sources/create-source.ts';
import type { CsvSourceSpec } from '../../../../src/sync/sources/source-spec.ts';
import type { SourceDeps } from '../../../../src/sync/sources/source-deps.ts';
import { collect, createTempDir, rejection } from '../../../fixtures/sources/source-test-kit.ts';

let tmp: Awaited<ReturnType<typeof createTempDir>>;
beforeAll(async () => {
  tmp = await createTempDir('csv-errors');
});
afterAll(async () => {
  await tmp.remove();
});

const read = (spec: Omit<CsvSourceSpec, 'type'>, extra: Partial<SourceDeps> = {}) =>
  collect(createSource({ type: 'csv', ...spec }, { env: {}, baseDir: tmp.dir, ...extra }));

/** Open file descriptors of this process (Linux): a source must close its file however it ends. */
const openFiles = () => readdirSync('/proc/self/fd').length;

/** What a user reads when a CSV file or its settings are wrong, and that nothing is left open. */
describe('csv source: errors and their messages', () => {
  it('a header with an empty or repeated column name is a format error naming file and line', async () => {
    await tmp.write('dup.csv', 'a,b,a\n1,2,3\n');
    const before = openFiles();
    const dup = await rejection(read({ path: 'dup.csv' }));
    expect(dup.code).toBe('SOURCE_FORMAT');
    expect(dup.message).toBe(
      `${join(tmp.dir, 'dup.csv')} line 1: header column "a" appears twice; column names must be unique`,
    );
    await tmp.write('empty.csv', '\n\na,,c\n1,2,3\n');
    const empty = await rejection(read({ path: 'empty.csv' }));
    expect(empty.code).toBe('SOURCE_FORMAT');
    expect(empty.message).toBe(
      `${join(tmp.dir, 'empty.csv')} line 3: header column 2 has no name; name every column or set header: false`,
    );
    for (let i = 0; i < 50 && openFiles() > before; i++) await new Promise((r) => setTimeout(r, 10));
    expect(openFiles()).toBe(before);
  });

  it('a quote never closed names the quote character, with the parser error as the cause', async () => {
    await tmp.write('open.csv', 'a,b\n1,2\n3,"never closed\n');
    const err = await rejection(read({ path: 'open.csv' }));
    expect(err.code).toBe('SOURCE_FORMAT');
    expect(err.message).toMatch(
      /open\.csv near line \d+: malformed CSV: a field opened with " is never closed$/,
    );
    expect(err.cause).toBeInstanceOf(CsvError);
    await tmp.write('open2.csv', "a;b\n1;'never closed\n");
    expect((await rejection(read({ path: 'open2.csv', delimiter: ';', quote: "'" }))).message).toContain(
      "a field opened with ' is never closed",
    );
  });

  it('text after a closing quote explains how to write a quote, in the configured quote character', async () => {
    await tmp.write('after.csv', "a;b\n'x'y;2\n");
    const err = await rejection(read({ path: 'after.csv', delimiter: ';', quote: "'" }));
    expect(err.code).toBe('SOURCE_FORMAT');
    expect(err.message).toContain(
      "text follows a closing '; inside a quoted field write the quote twice ('')",
    );
  });

  it('a parser option csv-parse refuses is a configuration error, and the file is closed', async () => {
    await tmp.write('opt.csv', 'a,b\n1,2\n');
    const before = openFiles();
    const err = await rejection(read({ path: 'opt.csv', delimiter: '' }));
    expect(err.code).toBe('SOURCE_CONFIG');
    expect(err.message).toMatch(/^csv source .*opt\.csv: invalid parser option: .*delimiter/);
    expect(err.cause).toBeInstanceOf(CsvError);
    // A stream left behind would have opened its file by now.
    await new Promise((r) => setTimeout(r, 50));
    expect(openFiles()).toBe(before);
  });

  it('an error that is not the parser’s passes through as it is, not as malformed CSV', async () => {
    await tmp.write('enc.csv', 'a,b\n1,2\n');
    const err = await rejection(read({ path: 'enc.csv', encoding: 'bogus' as 'utf8' }));
    // iconv-lite's own error for an encoding it does not know (a schema refuses it first).
    expect(err.message).toContain('bogus');
    expect(err.message).not.toMatch(/malformed CSV/);
  });

  it('without a header the wrong field count is measured against the first row', async () => {
    await tmp.write('nohead-ragged.csv', 'x,y,z\n1,2\n');
    const items = await read({ path: 'nohead-ragged.csv', header: false });
    expect(items[1]?.error?.message).toBe(
      `${join(tmp.dir, 'nohead-ragged.csv')} line 2: 2 fields, but the first row has 3`,
    );
  });

  it('a record holds exactly the header’s columns, no more', async () => {
    await tmp.write('cols.csv', 'a,b\n1,2\n');
    const [item] = await read({ path: 'cols.csv' });
    expect(Object.keys(item!.data)).toEqual(['a', 'b']);
  });

  it('a range read without a cursor field names the csv source', async () => {
    await tmp.write('range.csv', 'a\n1\n');
    const err = await rejection(read({ path: 'range.csv' }, { since: '1', until: '5' }));
    expect(err.code).toBe('SOURCE_CONFIG');
    expect(err.message).toMatch(/^csv source range\.csv: reading a range of cursor values/);
  });

  it('a read cancelled before it starts rejects, even for an empty file: it never looks like an empty source', async () => {
    await tmp.write('zero.csv', '');
    const controller = new AbortController();
    controller.abort();
    const err = await rejection(read({ path: 'zero.csv' }, { signal: controller.signal }));
    expect(err.name).toBe('AbortError');
  });

  it('a read cancelled midway rejects as cancelled, not as malformed CSV', async () => {
    await tmp.write('long.csv', ['n', ...Array.from({ length: 5000 }, (_, i) => String(i))].join('\n'));
    const controller = new AbortController();
    const source = createSource(
      { type: 'csv', path: 'long.csv' },
      { env: {}, baseDir: tmp.dir, signal: controller.signal },
    );
    let seen = 0;
    const err = await rejection(
      (async () => {
        for await (const _ of source) if (++seen === 10) controller.abort();
      })(),
    );
    expect(err.name).toBe('AbortError');
    expect(seen).toBe(10);
  });

  it('a consumer that stops early leaves no file open', async () => {
    await tmp.write('early.csv', ['n', ...Array.from({ length: 5000 }, (_, i) => String(i))].join('\n'));
    const before = openFiles();
    for await (const item of createSource(
      { type: 'csv', path: 'early.csv' },
      { env: {}, baseDir: tmp.dir },
    )) {
      expect(item.data).toEqual({ n: '0' });
      break;
    }
    // The stream closes its descriptor asynchronously once destroyed.
    for (let i = 0; i < 50 && openFiles() > before; i++) await new Promise((r) => setTimeout(r, 10));
    expect(openFiles()).toBe(before);
  });
});
