/**
 * Issue 23 §3, from the CLI: a stated delimiter the file does not use is refused with the
 * one to set even where every mapped column exists (a file without a header names its
 * columns col1..colN, so `col1` is there whatever the split), and `dlq replay --file`
 * reads a fixed export saved by Chinese Excel (GBK) as the csv source reads one.
 */
import type { ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import iconv from 'iconv-lite';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

describe('csv delimiters and encodings as Excel writes them, from the CLI', { timeout: 120_000 }, () => {
  const children: ChildProcess[] = [];
  let h: Harness;
  let ws: string;

  const cli = async (args: string[]) => spawnCli(h, children, args).exited;
  const landed = (sku: string) => h.emulator.state.rows(ws).find((r) => r.text.sku === sku)?.text;

  beforeAll(async () => {
    h = await createHarness('csv-delimiter');
    ws = h.createWorksheet({
      name: 'Artikel',
      alias: 'artikel',
      fields: [
        { name: 'Sku', alias: 'sku', type: 'Text', required: true, isTitle: true },
        { name: 'Preis', alias: 'preis', type: 'Number' },
        { name: 'Notiz', alias: 'notiz', type: 'Text' },
      ],
    });
  });
  afterEach(() => killChildren(children));
  afterAll(async () => h?.close());

  it('a file without a header read at the wrong delimiter fails validate and run, naming the one to set', async () => {
    // At ",", every line is one field: col1 exists, and each row would land whole in sku.
    await h.writeFile('ohne-kopf.csv', 'H-1;Kabel;rot;5;ja;X;G;S;1\nH-2;Stecker;blau;7;nein;;S;G;2\n');
    await h.writeJob(
      'ohne-kopf',
      `name: ohne-kopf
source: { type: csv, path: ./ohne-kopf.csv, delimiter: ',', header: false }
target: { worksheet: artikel, mode: upsert, key: sku }
fields: { sku: col1 }
`,
    );
    const hint = "line 1 has 8 `;` and no `,`: set source.delimiter: ';'";
    const valid = await cli(['validate', 'ohne-kopf']);
    expect(valid.code, valid.stdout + valid.stderr).toBe(1);
    expect(valid.stdout + valid.stderr).toContain(hint);
    const run = await cli(['run', 'ohne-kopf']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(hint);
    expect(h.emulator.state.rows(ws).filter((r) => String(r.text.sku).startsWith('H-'))).toEqual([]);
  });

  it('the same file with the delimiter set lands', async () => {
    await h.writeJob(
      'mit-semikolon',
      `name: mit-semikolon
source: { type: csv, path: ./ohne-kopf.csv, delimiter: ';', header: false }
target: { worksheet: artikel, mode: upsert, key: sku }
fields: { sku: col1, notiz: col2 }
`,
    );
    const run = await cli(['run', 'mit-semikolon']);
    expect(run.code, run.stderr).toBe(0);
    expect(landed('H-2')).toMatchObject({ notiz: 'Stecker' });
  });

  it('dlq replay --file reads a fixed export Chinese Excel saved in GBK, and asks for --encoding without it', async () => {
    await h.writeFile('gbk-quelle.csv', 'Artikel,Preis,Notiz\nC-1,zwölf,alt\n');
    await h.writeJob(
      'gbkjob',
      `name: gbkjob
source: { type: csv, path: ./gbk-quelle.csv }
target: { worksheet: artikel, mode: upsert, key: sku }
fields: { sku: Artikel, preis: Preis, notiz: Notiz }
`,
    );
    const run = await cli(['run', 'gbkjob']);
    expect(run.code, run.stderr).toBe(2);
    const exported = path.join(h.dir, 'gbk-export.csv');
    const out = await cli(['dlq', 'export', '--job', 'gbkjob', '--out', exported]);
    expect(out.code, out.stderr).toBe(0);
    const rows: string[][] = parse(await readFile(exported, 'utf8'), { bom: true });
    rows[1]![rows[0]!.indexOf('Preis')] = '12';
    rows[1]![rows[0]!.indexOf('Notiz')] = '中文备注，逗号';
    const quoted = (cell: string) => (/[,"\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);
    await writeFile(
      exported,
      iconv.encode(rows.map((r) => r.map(quoted).join(',')).join('\r\n') + '\r\n', 'gbk'),
    );

    const unread = await cli(['dlq', 'replay', '--file', exported]);
    expect(unread.code).toBe(1);
    expect(unread.stderr).toMatch(/line 2: not valid UTF-8.*--encoding gbk/);
    expect(landed('C-1')).toBeUndefined();

    const replay = await cli(['dlq', 'replay', '--file', exported, '--encoding', 'gbk']);
    expect(replay.code, replay.stderr + replay.stdout).toBe(0);
    expect(landed('C-1')).toMatchObject({ preis: '12', notiz: '中文备注，逗号' });
  });
});
