/**
 * Issue 23 §3: data as Excel and other systems write it, through the CLI as a user runs
 * it: value transforms in the mapping (`map`, `decimal`, `trueValues`, `trim`,
 * `default`) and the sample `plan` shows; a `;` file found without being told; files in
 * GBK, GB18030 and UTF-16LE; a mapped column missing even when every row is malformed;
 * empty values as NULL in a postgres pull.
 */
import type { ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import iconv from 'iconv-lite';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { PG_URL, pgQuery } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

describe('data as Excel writes it, from the CLI', { timeout: 120_000 }, () => {
  const children: ChildProcess[] = [];
  let h: Harness;
  let ws: string;

  const cli = async (args: string[]) => spawnCli(h, children, args).exited;
  const landed = () =>
    h.emulator.state
      .rows(ws)
      .map((r) => r.text)
      .sort((a, b) => String(a.sku).localeCompare(String(b.sku)));

  beforeAll(async () => {
    h = await createHarness('excel-data');
    ws = h.createWorksheet({
      name: 'Produkte',
      alias: 'produkte',
      fields: [
        { name: 'Sku', alias: 'sku', type: 'Text', required: true, isTitle: true },
        { name: 'Preis', alias: 'preis', type: 'Number' },
        { name: 'Aktiv', alias: 'aktiv', type: 'Checkbox' },
        { name: 'Lager', alias: 'lager', type: 'Checkbox' },
        {
          name: 'Stufe',
          alias: 'stufe',
          type: 'SingleSelect',
          options: [
            { value: 'Gold', index: 1 },
            { value: 'Silver', index: 2 },
          ],
        },
        { name: 'Notiz', alias: 'notiz', type: 'Text' },
      ],
    });
  });
  afterEach(() => killChildren(children));
  afterAll(async () => h?.close());

  it('map, decimal, trueValues, trim and default turn German Excel values into the fields', async () => {
    await h.writeFile(
      'produkte.csv',
      'Artikel;Preis;Aktiv;Lager;Stufe;Notiz\n' +
        'A-1;1.234,50;ja;X;G;  erste  \n' +
        'A-2;-12,5;nein;;S;\n' +
        'A-3;7;Ja;x;g;  \n',
    );
    await h.writeJob(
      'produkte',
      `name: produkte
source: { type: csv, path: ./produkte.csv, delimiter: ';' }
target: { worksheet: produkte, mode: upsert, key: sku }
fields:
  sku: Artikel
  preis: { from: Preis, decimal: ',' }
  aktiv: { from: Aktiv, map: { ja: true, nein: false } }
  lager: { from: Lager, trueValues: [X], default: false }
  stufe: { from: Stufe, map: { G: Gold, S: Silver } }
  notiz: { from: Notiz, trim: true, default: '(keine)' }
`,
    );
    const plan = await cli(['plan', 'produkte']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(
      'sample line 2: sku="A-1", preis=1234.5, aktiv="1", lager="1", stufe=["Gold"], notiz="erste"',
    );
    expect(plan.stdout).toContain(
      'sample line 3: sku="A-2", preis=-12.5, aktiv="0", lager="0", stufe=["Silver"]',
    );

    const run = await cli(['run', 'produkte', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ report: { created: 3, read: 3 } });
    const rows = landed();
    expect(rows).toEqual([
      expect.objectContaining({
        sku: 'A-1',
        preis: '1234.5',
        aktiv: '1',
        lager: '1',
        stufe: 'Gold',
        notiz: 'erste',
      }),
      expect.objectContaining({ sku: 'A-2', preis: '-12.5', stufe: 'Silver', notiz: '(keine)' }),
      expect.objectContaining({
        sku: 'A-3',
        preis: '7',
        aktiv: '1',
        lager: '1',
        stufe: 'Gold',
        notiz: '(keine)',
      }),
    ]);
    // An unticked checkbox has no display text on the platform.
    expect([rows[1]!.aktiv ?? '0', rows[1]!.lager ?? '0']).toEqual(['0', '0']);
  });

  it('a map value the field cannot take fails the plan, naming the field', async () => {
    await h.writeJob(
      'falsch',
      `name: falsch
source: { type: csv, path: ./produkte.csv, delimiter: ';' }
target: { worksheet: produkte, mode: upsert, key: sku }
fields:
  sku: Artikel
  stufe: { from: Stufe, map: { G: Platin } }
`,
    );
    const done = await cli(['plan', 'falsch']);
    expect(done.code).not.toBe(0);
    expect(done.stderr + done.stdout).toMatch(/stufe[\s\S]*map value for "G"[\s\S]*Platin/);
  });

  it('a ; file is read without being told its delimiter', async () => {
    await h.writeFile('semikolon.csv', 'Artikel;Preis;Notiz\nS-1;2,5;a, b und c\nS-2;3;\n');
    await h.writeJob(
      'semikolon',
      `name: semikolon
source: { type: csv, path: ./semikolon.csv }
target: { worksheet: produkte, mode: upsert, key: sku }
fields:
  sku: Artikel
  preis: { from: Preis, decimal: ',' }
  notiz: Notiz
`,
    );
    const valid = await cli(['validate', 'semikolon']);
    expect(valid.code, valid.stderr + valid.stdout).toBe(0);
    const run = await cli(['run', 'semikolon', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const rows = landed().filter((r) => String(r.sku).startsWith('S-'));
    expect(rows).toEqual([
      expect.objectContaining({ sku: 'S-1', preis: '2.5', notiz: 'a, b und c' }),
      expect.objectContaining({ sku: 'S-2', preis: '3' }),
    ]);
  });

  it('every row malformed still fails validate and run on the mapped columns, with the delimiter hint', async () => {
    // Read at ",": the header is one column, and each row (a decimal comma in it) has two fields.
    await h.writeFile(
      'komma.csv',
      'Artikel;Preis;Aktiv;Lager;Stufe;Notiz\nK-1;1,5;ja;X;G;\nK-2;7,0;nein;;S;\n',
    );
    await h.writeJob(
      'komma',
      `name: komma
source: { type: csv, path: ./komma.csv, delimiter: ',' }
target: { worksheet: produkte, mode: upsert, key: sku }
fields: { sku: Artikel, preis: Preis }
`,
    );
    const hint = "the header has 5 `;` and no `,`: set source.delimiter: ';'";
    const valid = await cli(['validate', 'komma']);
    expect(valid.code).toBe(1);
    expect(valid.stdout + valid.stderr).toContain('sku: { from: Artikel }: no such column');
    expect(valid.stdout + valid.stderr).toContain(hint);
    const run = await cli(['run', 'komma']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(hint);
    expect(landed().filter((r) => String(r.sku).startsWith('K-'))).toEqual([]);
  });

  it.each([
    ['gbk', 'G-1', '中文备注，逗号'],
    ['gb18030', 'G-2', '𠮷野家 €'],
    ['utf16le', 'G-3', '日本語 und Ümlaut'],
  ] as const)('a %s file lands as the text it holds', async (encoding, sku, note) => {
    const text = `Artikel,Notiz\n${sku},"${note}"\n`;
    const bytes =
      encoding === 'utf16le'
        ? Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(text, encoding)])
        : iconv.encode(text, encoding);
    await writeFile(path.join(h.dir, `${encoding}.csv`), bytes);
    await h.writeJob(
      `enc-${encoding}`,
      `name: enc-${encoding}
source: { type: csv, path: ./${encoding}.csv, encoding: ${encoding} }
target: { worksheet: produkte, mode: upsert, key: sku }
fields: { sku: Artikel, notiz: Notiz }
`,
    );
    const run = await cli(['run', `enc-${encoding}`, '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(landed().find((r) => r.sku === sku)).toMatchObject({ notiz: note });
  });

  it('a GBK file read as UTF-8 fails before writing, naming the encoding to set', async () => {
    await writeFile(path.join(h.dir, 'gbk-ohne.csv'), iconv.encode('Artikel,Notiz\nX-1,中文\n', 'gbk'));
    await h.writeJob(
      'gbk-ohne',
      `name: gbk-ohne
source: { type: csv, path: ./gbk-ohne.csv }
target: { worksheet: produkte, mode: upsert, key: sku }
fields: { sku: Artikel, notiz: Notiz }
`,
    );
    const run = await cli(['run', 'gbk-ohne']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/line 2: not valid UTF-8.*source\.encoding: gbk/);
    expect(landed().find((r) => r.sku === 'X-1')).toBeUndefined();
  });

  it('dlq replay --file reads the export as German Excel saves it, with ;', async () => {
    await h.writeFile('dlq.csv', 'Artikel,Preis\nD-1,zwölf\nD-2,3\n');
    await h.writeJob(
      'dlqjob',
      `name: dlqjob
source: { type: csv, path: ./dlq.csv }
target: { worksheet: produkte, mode: upsert, key: sku }
fields: { sku: Artikel, preis: Preis }
`,
    );
    const run = await cli(['run', 'dlqjob']);
    expect(run.code, run.stderr).toBe(2);
    const exported = path.join(h.dir, 'dlq-export.csv');
    const out = await cli(['dlq', 'export', '--job', 'dlqjob', '--out', exported]);
    expect(out.code, out.stderr).toBe(0);
    // Fixed and saved again by Excel: `;` between fields, the price fixed.
    const rows: string[][] = parse(await readFile(exported, 'utf8'), { bom: true });
    const preis = rows[0]!.indexOf('Preis');
    rows[1]![preis] = '12';
    const quoted = (cell: string) => (/[;"\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);
    await writeFile(exported, rows.map((r) => r.map(quoted).join(';')).join('\r\n') + '\r\n');
    const replay = await cli(['dlq', 'replay', '--file', exported]);
    expect(replay.code, replay.stderr + replay.stdout).toBe(0);
    expect(landed().find((r) => r.sku === 'D-1')).toMatchObject({ preis: '12' });
  });
});

describe('a pull into postgres writes empty values as NULL, from the CLI', { timeout: 120_000 }, () => {
  const SCHEMA = `rb_excel_pull_${process.pid}`;
  const children: ChildProcess[] = [];
  let h: Harness;

  beforeAll(async () => {
    h = await createHarness('excel-pull', {}, { EXPORT_DB: PG_URL });
    const ws = h.createWorksheet({
      name: 'Teile',
      alias: 'teile',
      fields: [
        { name: 'Code', alias: 'code', type: 'Text', isTitle: true },
        { name: 'Note', alias: 'note', type: 'Text' },
        { name: 'Qty', alias: 'qty', type: 'Number' },
        { name: 'Tags', alias: 'tags', type: 'MultipleSelect', options: [{ value: 'A', index: 1 }] },
        { name: 'Ok', alias: 'ok', type: 'Checkbox' },
        { name: 'Day', alias: 'day', type: 'Date' },
        { name: 'Seen', alias: 'seen', type: 'DateTime' },
      ],
    });
    await h.rt.clientFor().rows.batchCreate(ws, {
      rows: [
        {
          fields: [
            { id: 'code', value: 'T-1' },
            { id: 'note', value: 'n' },
            { id: 'qty', value: 2.5 },
            { id: 'ok', value: '1' },
            { id: 'day', value: '2025-03-18' },
            { id: 'seen', value: '2025-03-18 16:02:11' },
          ],
        },
        { fields: [{ id: 'code', value: 'T-2' }] },
      ],
    });
    await pgQuery(`CREATE SCHEMA ${SCHEMA}`);
  });
  afterEach(() => killChildren(children));
  afterAll(async () => {
    await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await h?.close();
  });

  it('an empty text, number or list is NULL in the table', async () => {
    await h.writeJob(
      'teile',
      `name: teile
source: { type: worksheet, worksheet: teile }
sink: { type: postgres, urlEnv: EXPORT_DB, table: ${SCHEMA}.teile, key: code, createTable: true }
fields: { code: code, note: note, qty: qty, tags: tags }
`,
    );
    const run = await spawnCli(h, children, ['run', 'teile']).exited;
    expect(run.code, run.stderr).toBe(0);
    const rows = await pgQuery<Record<string, unknown>>(
      `SELECT code, note IS NULL AS note_null, qty IS NULL AS qty_null, tags IS NULL AS tags_null FROM ${SCHEMA}.teile ORDER BY code`,
    );
    expect(rows).toEqual([
      { code: 'T-1', note_null: false, qty_null: false, tags_null: true },
      { code: 'T-2', note_null: true, qty_null: true, tags_null: true },
    ]);
  });

  it('createTable types columns by field type: numeric, boolean, date, timestamptz', async () => {
    await h.writeJob(
      'typed',
      `name: typed
source: { type: worksheet, worksheet: teile }
sink: { type: postgres, urlEnv: EXPORT_DB, table: ${SCHEMA}.typed, key: code, createTable: true }
fields: { code: code, qty: qty, ok: ok, day: day, seen: seen, changed: _updatedAt, note: note }
`,
    );
    const run = await spawnCli(h, children, ['run', 'typed']).exited;
    expect(run.code, run.stderr).toBe(0);
    const types = await pgQuery<{ column_name: string; data_type: string }>(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = '${SCHEMA}' AND table_name = 'typed' ORDER BY column_name`,
    );
    expect(Object.fromEntries(types.map((t) => [t.column_name, t.data_type]))).toEqual({
      changed: 'timestamp with time zone',
      code: 'text',
      day: 'date',
      note: 'text',
      ok: 'boolean',
      qty: 'numeric',
      seen: 'timestamp with time zone',
    });
    const [row] = await pgQuery<Record<string, unknown>>(
      `SELECT qty::text, ok, day::text, (seen AT TIME ZONE 'UTC')::text AS seen_utc FROM ${SCHEMA}.typed WHERE code = 'T-1'`,
    );
    // 16:02:11 on the organisation's clock (Asia/Shanghai, UTC+8) is 08:02:11 UTC.
    expect(row).toEqual({ qty: '2.5', ok: true, day: '2025-03-18', seen_utc: '2025-03-18 08:02:11' });
  });

  it.each([
    ['wall', /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/, '2025-03-18 16:02:11'],
    ['iso', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+08:00$/, '2025-03-18T16:02:11+08:00'],
  ] as const)(
    'a csv pull writes every time, system fields included, in one form: %s',
    async (format, shape, seen) => {
      await h.writeJob(
        `times-${format}`,
        `name: times-${format}
source: { type: worksheet, worksheet: teile }
sink: { type: csv, path: ./times-${format}.csv, key: code${format === 'iso' ? ', timeFormat: iso' : ''} }
fields: { code: code, seen: seen, created: _createdAt, changed: _updatedAt }
`,
      );
      const run = await spawnCli(h, children, ['run', `times-${format}`]).exited;
      expect(run.code, run.stderr).toBe(0);
      const rows = parse<Record<string, string>>(
        await readFile(path.join(h.dir, `times-${format}.csv`), 'utf8'),
        {
          columns: true,
        },
      );
      const t1 = rows.find((r) => r.code === 'T-1')!;
      expect(t1.seen).toBe(seen);
      for (const r of rows) for (const column of ['created', 'changed']) expect(r[column]).toMatch(shape);
    },
  );
});
