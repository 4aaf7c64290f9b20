/**
 * Issue 23 §3: data as Excel and other systems write it, through the CLI as a user runs
 * it: value transforms in the mapping (`map`, `decimal`, `trueValues`, `trim`,
 * `default`) and the sample `plan` shows; a `;` file found without being told; files in
 * GBK, GB18030 and UTF-16LE; a mapped column missing even when every row is malformed.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
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
});
