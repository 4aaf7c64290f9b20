import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstInvalidUtf8Line } from '../../src/sync/read/file-prepass.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const ROWS = 3_000;

function csv(broken?: { line: number; text: string }): string {
  const lines = ['no,name'];
  for (let i = 1; i <= ROWS; i++) lines.push(`N-${i},Name ${i}`);
  // Line numbers are the file's: line 1 is the header.
  if (broken !== undefined) lines[broken.line - 1] = broken.text;
  return lines.join('\n') + '\n';
}

describe('a file source is read through before the first write', () => {
  let h: Harness;
  let sheet: string;

  beforeAll(async () => {
    h = await createHarness('prepass');
    sheet = h.createWorksheet({
      name: 'Names',
      alias: 'names',
      fields: [
        { name: 'No', alias: 'no', type: 'Text', required: true, isTitle: true },
        { name: 'Name', alias: 'name', type: 'Text' },
      ],
    });
    // Append: no key, so a second run of rows already written would duplicate them.
    await h.writeJob(
      'names',
      `name: names
source: { type: csv, path: ./names.csv }
target: { worksheet: names, mode: append, batchSize: 100 }
fields: { no: no, name: name }
`,
    );
  });
  afterAll(async () => {
    await h.close();
  });

  it('a broken quote at line 2,900 fails the run with nothing written; the fixed file then lands every row once', async () => {
    await h.writeFile('names.csv', csv({ line: 2_900, text: 'N-2899,"Name 2899' }));
    const failed = await h.runJob('names');
    expect(failed.record.status).toBe('failed');
    expect(failed.record.message).toMatch(/names\.csv/);
    expect(h.emulator.state.rowCount(sheet)).toBe(0);

    await h.writeFile('names.csv', csv());
    const fixed = await h.runJob('names');
    expect(fixed.record.status).toBe('completed');
    const nos = h.emulator.state.rows(sheet).map((r) => String(r.values.no));
    expect(nos).toHaveLength(ROWS);
    expect(new Set(nos).size).toBe(ROWS);
  });

  it('invalid UTF-8 is an error naming the line, never a silent U+FFFD', async () => {
    const before = h.emulator.state.rowCount(sheet);
    const text = csv();
    const at = text.indexOf('N-1500,');
    const bytes = Buffer.concat([
      Buffer.from(text.slice(0, at)),
      Buffer.from([0x4e, 0xff, 0x2d]),
      Buffer.from(text.slice(at + 2)),
    ]);
    await writeFile(path.join(h.dir, 'names.csv'), bytes);
    const failed = await h.runJob('names');
    expect(failed.record.status).toBe('failed');
    expect(failed.record.message).toMatch(/names\.csv line 1501: not valid UTF-8/);
    expect(h.emulator.state.rowCount(sheet)).toBe(before);
  });

  it('a file with only a header completes and writes nothing', async () => {
    const before = h.emulator.state.rowCount(sheet);
    await h.writeFile('names.csv', 'no,name\n');
    const empty = await h.runJob('names');
    expect(empty.record.status).toBe('completed');
    expect(empty.report).toMatchObject({ read: 0, created: 0 });
    expect(h.emulator.state.rowCount(sheet)).toBe(before);
  });
});

describe('firstInvalidUtf8Line', () => {
  it('finds the line of a stray byte, an overlong form and a cut sequence, and passes real UTF-8', () => {
    expect(firstInvalidUtf8Line(Buffer.from('a\nb\nc\n'))).toBeUndefined();
    expect(firstInvalidUtf8Line(Buffer.from('größe\n日本\n🙂\n'))).toBeUndefined();
    expect(firstInvalidUtf8Line(Buffer.concat([Buffer.from('a\nb\n'), Buffer.from([0xff])]))).toBe(3);
    expect(firstInvalidUtf8Line(Buffer.from([0x61, 0x0a, 0xc0, 0xaf]))).toBe(2);
    expect(firstInvalidUtf8Line(Buffer.from([0x0a, 0x0a, 0xe6, 0x97]))).toBe(3);
  });
});
