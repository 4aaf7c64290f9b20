/**
 * Attack: one huge CSV cell. ROWBRIDGE_MAX_CELL_BYTES was applied to records already
 * read, after the parser had buffered the cell: a 150 MB cell peaked at 643 MB. A field
 * over the cap must be refused while scanning, naming file, line and field, with no more
 * than the cap (and a chunk) ever held.
 */
import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCsvScanner } from '../../src/sync/sources/csv-scanner.ts';
import { createSource } from '../../src/sync/sources/create-source.ts';
import { collect, createTempDir, rejection } from '../fixtures/sources/source-test-kit.ts';

const run = promisify(execFile);
const SRC = fileURLToPath(new URL('../../src/sync/sources/create-source.ts', import.meta.url));

/** A CSV whose line 3 has a `body` cell of `mb` MB, written in pieces (never whole in memory). */
async function writeHugeCell(file: string, mb: number, quoted: boolean): Promise<void> {
  const out = createWriteStream(file);
  const write = (text: string) =>
    new Promise<void>((resolve) => (out.write(text) ? resolve() : out.once('drain', resolve)));
  await write(`code,body\nA,short\nB,${quoted ? '"' : ''}`);
  const piece = 'x'.repeat(1024 * 1024);
  for (let i = 0; i < mb; i++) await write(piece);
  await write(`${quoted ? '"' : ''}\nC,after\n`);
  await new Promise<void>((resolve) => out.end(resolve));
}

describe('a CSV cell over ROWBRIDGE_MAX_CELL_BYTES', () => {
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  beforeEach(async () => {
    tmp = await createTempDir('cell-cap');
  });
  afterEach(async () => {
    await tmp.remove();
  });

  it('stops the scanner with the field named, holding no more than the cap and a chunk', () => {
    const cap = 1000;
    const chunk = 300;
    const scanner = createCsvScanner({ build: true, maxFieldChars: cap })!;
    const records: Array<string[] | undefined> = [];
    const sink = (fields: string[] | undefined) => void records.push(fields);
    expect(scanner.push('code,body\nA,short\nB,"', sink)).toBe(true);
    let pushes = 0;
    while (scanner.push('y'.repeat(chunk), sink)) {
      expect(scanner.rest().length).toBeLessThanOrEqual(cap + chunk + 3);
      if (++pushes > 100) break;
    }
    expect(scanner.oversized()).toEqual({ line: 3, field: 1 });
    expect(scanner.rest().length).toBe(0);
    expect(records).toEqual([
      ['code', 'body'],
      ['A', 'short'],
    ]);
  });

  it.each([true, false])('refuses the file naming file, line and field (quoted: %s)', async (quoted) => {
    const file = path.join(tmp.dir, 'notes.csv');
    await writeHugeCell(file, 5, quoted);
    const err = await rejection(
      collect(
        createSource(
          { type: 'csv', path: file },
          { env: { ROWBRIDGE_MAX_CELL_BYTES: '65536' }, baseDir: '/' },
        ),
      ),
    );
    expect(err.code).toBe('SOURCE_FORMAT');
    expect(err.message).toBe(
      `${file} line 3: field body holds more than 65536 characters, over ROWBRIDGE_MAX_CELL_BYTES (65536 bytes); ` +
        'the file was not read on: shorten the cell, or raise ROWBRIDGE_MAX_CELL_BYTES',
    );
  });

  it('refuses a 120 MB cell in a process whose heap could not hold it', async () => {
    const file = path.join(tmp.dir, 'huge.csv');
    await writeHugeCell(file, 120, true);
    const script = path.join(tmp.dir, 'read.ts');
    await tmp.write(
      'read.ts',
      `import { createSource } from ${JSON.stringify(SRC)};\n` +
        `try {\n  for await (const _ of createSource({ type: 'csv', path: ${JSON.stringify(file)} }, { env: {}, baseDir: '/' }));\n` +
        `  console.log('read through');\n} catch (err) { console.log('refused: ' + err.message); }\n` +
        // maxRSS is in KiB: the whole process's peak, heap and buffers outside it alike.
        `console.log(Math.round(process.resourceUsage().maxRSS / 1024));\n`,
    );
    const { stdout } = await run(process.execPath, ['--max-old-space-size=48', script], {
      env: { PATH: process.env.PATH ?? '' },
    }).catch((err: { stdout?: string; stderr?: string; code?: unknown }) => ({
      stdout: `crashed (${String(err.code)}): ${err.stderr?.slice(-300) ?? ''}`,
    }));
    const [outcome, peakMb] = stdout.trim().split('\n');
    // Node alone peaks near 60 MB here; buffering the cell took several times its 120 MB.
    expect(Number(peakMb)).toBeLessThan(120);
    expect(outcome).toBe(
      `refused: ${file} line 3: field body holds more than 1048576 characters, over ROWBRIDGE_MAX_CELL_BYTES ` +
        '(1048576 bytes); the file was not read on: shorten the cell, or raise ROWBRIDGE_MAX_CELL_BYTES',
    );
  }, 60_000);
});
