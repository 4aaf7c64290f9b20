import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as dlq } from '../../src/cli/dlq.ts';
import { captureIo } from '../helpers/capture-io.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/** Dead letters a person can fix: exported to a spreadsheet, fixed, replayed from the file. */
describe('dlq export and dlq replay --file', () => {
  let h: Harness;
  let sheet: string;

  beforeAll(async () => {
    h = await createHarness('dlqfile');
    sheet = h.createWorksheet({
      name: 'Orders',
      alias: 'orders',
      fields: [
        { name: 'No', alias: 'no', type: 'Text', required: true, isTitle: true },
        { name: 'Amount', alias: 'amount', type: 'Number' },
        { name: 'Note', alias: 'note', type: 'Text' },
      ],
    });
    await h.writeFile(
      'orders.csv',
      'no,amount,note\nO-1,10,fine\nO-2,ten,"=HYPERLINK(""http://evil.example"")"\nO-3,12.5,fine\nO-4,"1,2,3",plain\n',
    );
    await h.writeJob(
      'orders',
      `name: orders
source: { type: csv, path: ./orders.csv }
target: { worksheet: orders, mode: upsert, key: no }
fields: { no: no, amount: amount, note: note }
`,
    );
    const { report } = await h.runJob('orders');
    expect(report).toMatchObject({ created: 2, deadLetteredTotal: 2 });
    await h.workers?.close();
    h.workers = undefined;
  });
  afterAll(async () => {
    await h.close();
  });

  it('exports the rows as they came from the source plus reasons, safe against formulas', async () => {
    const io = captureIo({ ...h.env });
    io.cwd = h.dir;
    expect(await dlq(['export', '--csv', '--job', 'orders', '--out', 'fix.csv'], io)).toBe(0);
    const csv = await readFile(path.join(h.dir, 'fix.csv'), 'utf8');
    const [header, ...rows] = csv.trimEnd().split('\r\n');
    expect(header).toBe(
      '_dlq_id,_dlq_job,_dlq_category,_dlq_code,_dlq_field,_dlq_position,_dlq_reason,no,amount,note',
    );
    expect(rows).toHaveLength(2);
    const o2 = rows.find((r) => r.includes(',O-2,'))!;
    expect(o2).toMatch(/,orders,invalid-row,,amount,line 3,/);
    // The formula reaches the spreadsheet as text.
    expect(o2).toContain(`"'=HYPERLINK(""http://evil.example"")"`);
    expect(io.stderr.join('\n')).toContain('wrote 2 dead letters');
  });

  it('replays the fixed file under the job mapping: the rows land, their entries leave the store', async () => {
    const file = path.join(h.dir, 'fix.csv');
    const fixed = (await readFile(file, 'utf8'))
      .replace(',O-2,ten,', ',O-2,11,')
      .replace(',O-4,"1,2,3",', ',O-4,14,');
    await writeFile(file, fixed);
    const io = captureIo({ ...h.env });
    io.cwd = h.dir;
    expect(await dlq(['replay', '--file', 'fix.csv'], io)).toBe(0);
    const rows = new Map(h.emulator.state.rows(sheet).map((r) => [String(r.values.no), r.values]));
    expect([...rows.keys()].sort()).toEqual(['O-1', 'O-2', 'O-3', 'O-4']);
    expect(rows.get('O-2')).toMatchObject({ amount: 11, note: '=HYPERLINK("http://evil.example")' });
    expect(rows.get('O-4')).toMatchObject({ amount: 14 });
    expect(await h.rt.deadLetters.counts({ job: 'orders' })).toEqual({});
  });

  it('refuses a file row without its id, changing nothing', async () => {
    await h.writeFile('bad.csv', '_dlq_id,no,amount\n,O-9,1\n');
    const io = captureIo({ ...h.env });
    io.cwd = h.dir;
    expect(await dlq(['replay', '--file', 'bad.csv'], io)).toBe(1);
    expect(io.stderr.join('\n')).toMatch(/bad\.csv line 2: no _dlq_id/);
  });

  it('purges chosen entries by id', async () => {
    await h.rt.deadLetters.add([
      {
        id: 'r:0',
        job: 'orders',
        runId: 'r',
        category: 'invalid-row',
        message: 'x',
        source: { data: {}, position: { index: 0 } },
        attempts: 1,
      },
      {
        id: 'r:1',
        job: 'orders',
        runId: 'r',
        category: 'invalid-row',
        message: 'y',
        source: { data: {}, position: { index: 1 } },
        attempts: 1,
      },
    ]);
    const io = captureIo({ ...h.env });
    expect(await dlq(['purge', 'r:1', 'nope:9'], io)).toBe(0);
    expect(io.stdout.join('\n')).toContain('purged 1 dead letter (1 of the ids given were not in the store)');
    expect(await h.rt.deadLetters.get('r:0')).toBeDefined();
    expect(await h.rt.deadLetters.get('r:1')).toBeUndefined();
  });
});
