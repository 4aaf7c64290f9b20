import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createSource } from '../../../../src/sync/sources/create-source.ts';
import type { CsvSourceSpec } from '../../../../src/sync/sources/source-spec.ts';
import { collect, createTempDir, rejection } from '../../../fixtures/sources/source-test-kit.ts';

let tmp: Awaited<ReturnType<typeof createTempDir>>;
beforeAll(async () => {
  tmp = await createTempDir('csv');
});
afterAll(async () => {
  await tmp.remove();
});

const read = (spec: Omit<CsvSourceSpec, 'type'>, extra: { since?: unknown; cursorField?: string } = {}) =>
  collect(createSource({ type: 'csv', ...spec }, { env: {}, baseDir: tmp.dir, ...extra }));

describe('csv source', () => {
  it('reads a BOM-prefixed file with quoted delimiters, quotes and line breaks, reporting start lines', async () => {
    for (const nl of ['\n', '\r\n']) {
      const text =
        ['\uFEFFid,name,note', '1,"Smith, Jo","said ""hi"""', '2,Ann,"two', 'lines"', '3,Bo,plain'].join(nl) +
        nl;
      await tmp.write('people.csv', text);
      const items = await read({ path: 'people.csv' });
      expect(items.map((i) => i.data)).toEqual([
        { id: '1', name: 'Smith, Jo', note: 'said "hi"' },
        { id: '2', name: 'Ann', note: `two${nl}lines` },
        { id: '3', name: 'Bo', note: 'plain' },
      ]);
      expect(items.map((i) => i.position)).toEqual([
        { index: 0, line: 2 },
        { index: 1, line: 3 },
        { index: 2, line: 5 },
      ]);
    }
  });

  it('reads the last line of a file without a final newline', async () => {
    await tmp.write('no-eol.csv', 'id,name\n1,Ann\n2,Bo');
    const items = await read({ path: 'no-eol.csv' });
    expect(items.map((i) => [i.data, i.position.line])).toEqual([
      [{ id: '1', name: 'Ann' }, 2],
      [{ id: '2', name: 'Bo' }, 3],
    ]);
  });

  it('skips blank lines by default and still reports the right lines', async () => {
    await tmp.write('blank.csv', 'a,b\n\n1,2\n\n\n3,4\n');
    const items = await read({ path: 'blank.csv' });
    expect(items.map((i) => [i.data, i.position.line])).toEqual([
      [{ a: '1', b: '2' }, 3],
      [{ a: '3', b: '4' }, 6],
    ]);
  });

  it('with skipEmptyLines false a blank line is a record with the wrong field count', async () => {
    await tmp.write('blank2.csv', 'a,b\n1,2\n\n3,4\n');
    const items = await read({ path: 'blank2.csv', skipEmptyLines: false });
    expect(items.map((i) => i.error === undefined)).toEqual([true, false, true]);
    expect(items[1]?.error?.message).toContain('line 3');
  });

  it('decodes latin1 files', async () => {
    await tmp.write('latin.csv', Buffer.from('name,city\nJosé,Zürich\n', 'latin1'));
    expect((await read({ path: 'latin.csv', encoding: 'latin1' })).map((i) => i.data)).toEqual([
      { name: 'José', city: 'Zürich' },
    ]);
  });

  it('names columns col1..colN when there is no header row', async () => {
    await tmp.write('nohead.csv', 'x,y,z\n1,2,3\n');
    const items = await read({ path: 'nohead.csv', header: false });
    expect(items.map((i) => [i.data, i.position.line])).toEqual([
      [{ col1: 'x', col2: 'y', col3: 'z' }, 1],
      [{ col1: '1', col2: '2', col3: '3' }, 2],
    ]);
  });

  it('honours another delimiter and quote character', async () => {
    await tmp.write('semi.csv', "a;b\n'x;y';2\n");
    expect((await read({ path: 'semi.csv', delimiter: ';', quote: "'" })).map((i) => i.data)).toEqual([
      { a: 'x;y', b: '2' },
    ]);
  });

  it('yields a row with the wrong field count as an invalid record naming file and line, and reads on', async () => {
    await tmp.write('ragged.csv', 'a,b\n1,2\n3,4,5\n6\n7,8\n');
    const items = await read({ path: 'ragged.csv' });
    expect(items).toHaveLength(4);
    expect(items[1]).toMatchObject({
      data: {},
      position: { index: 1, line: 3 },
      error: { code: 'SOURCE_RECORD_INVALID' },
    });
    expect(items[1]?.error?.message).toBe(
      `${join(tmp.dir, 'ragged.csv')} line 3: 3 fields, but the header has 2`,
    );
    expect(items[2]?.error?.message).toContain('line 4: 1 fields');
    expect(items[3]).toMatchObject({ data: { a: '7', b: '8' }, position: { index: 3, line: 5 } });
  });

  it('stops with the file and line when quoting is broken', async () => {
    await tmp.write('quote.csv', 'a,b\n1,2\n3,"x"y\n5,6\n');
    const err = await rejection(read({ path: 'quote.csv' }));
    expect(err.code).toBe('SOURCE_FORMAT');
    expect(err.message).toContain(join(tmp.dir, 'quote.csv'));
    expect(err.message).toContain('line 3');
    expect(err.message).toContain('write the quote twice');
  });

  it('rejects a header with a duplicate or empty column name', async () => {
    await tmp.write('dup.csv', 'a,b,a\n1,2,3\n');
    expect((await rejection(read({ path: 'dup.csv' }))).message).toContain('header column "a" appears twice');
    await tmp.write('empty.csv', 'a,,c\n1,2,3\n');
    expect((await rejection(read({ path: 'empty.csv' }))).message).toContain('header column 2 has no name');
  });

  it('names the resolved path when the file is missing', async () => {
    const err = await rejection(read({ path: 'nope/missing.csv' }));
    expect(err.code).toBe('SOURCE_CONFIG');
    expect(err.message).toContain(join(tmp.dir, 'nope/missing.csv'));
    expect(err.message).toContain('does not exist');
  });

  it('reads only records past the saved cursor, comparing numbers as numbers and dates as dates', async () => {
    await tmp.write(
      'inc.csv',
      'id,seq,at\na,9,2024-01-02T00:00:00Z\nb,10,2024-01-03\nc,100,2023-12-31T23:59:59Z\nd,,\n',
    );
    const bySeq = await read({ path: 'inc.csv' }, { since: '9', cursorField: 'seq' });
    // "10" and "100" are past 9 as numbers (as strings they would sort before "9"); d has no cursor and is kept.
    expect(bySeq.map((i) => [i.data.id, i.cursor])).toEqual([
      ['b', '10'],
      ['c', '100'],
      ['d', undefined],
    ]);
    const byDate = await read({ path: 'inc.csv' }, { since: '2024-01-02T00:00:00.000Z', cursorField: 'at' });
    expect(byDate.map((i) => i.data.id)).toEqual(['b', 'd']);
    const first = await read({ path: 'inc.csv' }, { cursorField: 'seq' });
    expect(first.map((i) => i.cursor)).toEqual(['9', '10', '100', undefined]);
  });

  it('streams a large CRLF file with multi-line fields and keeps every line number right', async () => {
    const rows = ['id,text'];
    for (let i = 1; i <= 200_000; i++)
      rows.push(i % 1000 === 0 ? `${i},"multi\r\nline ${i}"` : `${i},row ${i}`);
    await tmp.write('large.csv', rows.join('\r\n') + '\r\n');
    let count = 0;
    let line = 2;
    for await (const item of createSource(
      { type: 'csv', path: 'large.csv' },
      { env: {}, baseDir: tmp.dir },
    )) {
      count++;
      expect(item.position.line).toBe(line);
      expect(item.data.id).toBe(String(count));
      line += count % 1000 === 0 ? 2 : 1;
    }
    expect(count).toBe(200_000);
  });
});
