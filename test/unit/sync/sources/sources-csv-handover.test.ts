/**
 * The csv source past the scanner's sure part: from the first record the scanner is not
 * sure of, csv-parse reads on, and a user sees the same records, lines and errors as when
 * csv-parse read the whole file.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSource } from '../../../../src/sync/sources/create-source.ts';
import { collect, createTempDir, rejection } from '../../../fixtures/sources/source-test-kit.ts';

let tmp: Awaited<ReturnType<typeof createTempDir>>;
beforeAll(async () => {
  tmp = await createTempDir('csv-handover');
});
afterAll(async () => {
  await tmp.remove();
});

const rows = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${from + i},"n ${from + i}"`);

describe('csv source after the scanner hands over', () => {
  it('a stray \\r past the first chunk stays in its field, and every later record keeps its line', async () => {
    // 5,000 rows fill several 64 KiB chunks; csv-parse takes the \r as data in an LF file.
    const lines = ['id,name', ...rows(1, 5000), '5001,odd\rone', ...rows(5002, 6000)];
    await tmp.write('cr.csv', lines.join('\n') + '\n');
    const items = await collect(createSource({ type: 'csv', path: 'cr.csv' }, { env: {}, baseDir: tmp.dir }));
    expect(items).toHaveLength(6000);
    expect(items[4999]).toMatchObject({
      data: { id: '5000', name: 'n 5000' },
      position: { index: 4999, line: 5001 },
    });
    expect(items[5000]).toMatchObject({
      data: { id: '5001', name: 'odd\rone' },
      position: { index: 5000, line: 5002 },
    });
    // The reader counts a \r in a field as a line break, as it did with csv-parse alone.
    expect(items[5001]).toMatchObject({ data: { id: '5002' }, position: { index: 5001, line: 5004 } });
    expect(items[5999]?.position.line).toBe(6002);
  });

  it('broken quoting deep in a file names the file and its line', async () => {
    const lines = ['id,name', ...rows(1, 5000), '5001,"x"y', ...rows(5002, 5010)];
    await tmp.write('deep.csv', lines.join('\n') + '\n');
    const err = await rejection(
      collect(createSource({ type: 'csv', path: 'deep.csv' }, { env: {}, baseDir: tmp.dir })),
    );
    expect(err.code).toBe('SOURCE_FORMAT');
    expect(err.message).toBe(
      `${join(tmp.dir, 'deep.csv')} near line 5002: malformed CSV: text follows a closing "; inside a quoted field write the quote twice ("")`,
    );
  });
});
