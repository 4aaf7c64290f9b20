import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreateWorksheetInput } from '../../src/api/types.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const ORDERS: CreateWorksheetInput = {
  name: 'Orders',
  alias: 'orders',
  fields: [
    { name: 'Order number', alias: 'order_no', type: '2', required: true, isTitle: true },
    { name: 'Amount', alias: 'amount', type: '6' },
    {
      name: 'Status',
      alias: 'status',
      type: '11',
      options: [
        { value: 'New', index: 1 },
        { value: 'Paid', index: 2 },
        { value: 'Shipped', index: 3 },
      ],
    },
    { name: 'Placed', alias: 'placed', type: '15' },
    { name: 'Channel', alias: 'channel', type: '2' },
  ],
};

function csv(rows: Array<[string, string, string, string]>): string {
  return ['Order Number,Total,Status,Date', ...rows.map((r) => r.join(','))].join('\n') + '\n';
}

function job(mode: string, extra = ''): string {
  return `name: orders
source: { type: csv, path: ./orders.csv }
target:
  worksheet: orders
  mode: ${mode}
  key: order_no
  batchSize: 4
  triggerWorkflow: false
fields:
  order_no: Order Number
  amount: { from: Total }
  status: { from: Status }
  placed: { from: Date, format: DD/MM/YYYY, timezone: Asia/Shanghai }
  channel: { value: web }
${extra}`;
}

// Against the platform's dialect (the default) and the seed spec's forms.
describe.each(['platform', 'spec'] as const)('sync modes against the emulator (%s dialect)', (dialect) => {
  let h: Harness;
  let ws: string;

  beforeAll(async () => {
    h = await createHarness(`modes-${dialect}`, { dialect });
  });
  afterAll(async () => {
    await h.close();
  });

  const byOrder = () =>
    new Map(
      h.emulator.state.rows(ws).map((r) => [String(r.values.order_no), { ...r.text, id: r.id }] as const),
    );

  it('appends every row of a CSV with values coerced, then upserts with zero writes on a re-run', async () => {
    h = await recreate(h);
    ws = h.createWorksheet(ORDERS);
    const rows: Array<[string, string, string, string]> = Array.from({ length: 10 }, (_, i) => [
      `A-${i + 1}`,
      `${(i + 1) * 10}.5`,
      i % 2 === 0 ? 'new' : 'Paid',
      `0${(i % 9) + 1}/03/2026`,
    ]);
    await h.writeFile('orders.csv', csv(rows));
    await h.writeJob('orders', job('upsert'));

    const first = await h.runJob('orders');
    expect(first.record.status).toBe('completed');
    expect(first.report).toMatchObject({
      read: 10,
      created: 10,
      updated: 0,
      unchanged: 0,
      deadLetteredTotal: 0,
    });
    const landed = byOrder();
    expect(landed.size).toBe(10);
    expect(landed.get('A-1')).toMatchObject({
      amount: '10.5',
      status: 'New',
      placed: '2026-03-01',
      channel: 'web',
    });
    expect(landed.get('A-2')).toMatchObject({ status: 'Paid' });

    const requestsBefore = h.emulator.requests.length;
    const second = await h.runJob('orders');
    expect(second.report).toMatchObject({ read: 10, created: 0, updated: 0, unchanged: 10 });
    const writes = h.emulator.requests
      .slice(requestsBefore)
      .filter((r) => r.method !== 'GET' && !r.path.endsWith('/list'));
    expect(writes).toEqual([]);
    expect(h.emulator.state.rowCount(ws)).toBe(10);
  });

  it('upsert updates changed rows (grouping identical change sets) and creates new ones', async () => {
    h = await recreate(h);
    ws = h.createWorksheet(ORDERS);
    const base: Array<[string, string, string, string]> = Array.from({ length: 6 }, (_, i) => [
      `B-${i}`,
      '1',
      'New',
      '01/01/2026',
    ]);
    await h.writeFile('orders.csv', csv(base));
    await h.writeJob('orders', job('upsert'));
    await h.runJob('orders');
    const ids = byOrder();

    const next = base.map((r, i): [string, string, string, string] =>
      i < 4 ? [r[0], r[1], 'Shipped', r[3]] : r,
    );
    next[5] = ['B-5', '99', 'New', '01/01/2026'];
    next.push(['B-new', '5', 'Paid', '02/02/2026']);
    await h.writeFile('orders.csv', csv(next));
    const before = h.emulator.requests.length;
    const run = await h.runJob('orders');
    expect(run.report).toMatchObject({ read: 7, created: 1, updated: 5, unchanged: 1 });
    const after = byOrder();
    expect(after.get('B-0')).toMatchObject({ status: 'Shipped', id: ids.get('B-0')!.id });
    expect(after.get('B-5')).toMatchObject({ amount: '99' });
    expect(after.get('B-new')).toMatchObject({ status: 'Paid' });
    const patches = h.emulator.requests.slice(before).filter((r) => r.method === 'PATCH');
    // Four rows share one change set (status → Shipped): one batch update, plus one single update.
    expect(patches.filter((r) => r.path.endsWith('/rows/batch'))).toHaveLength(1);
    expect(patches.filter((r) => !r.path.endsWith('/rows/batch'))).toHaveLength(1);
  });

  it('update mode touches existing rows only', async () => {
    h = await recreate(h);
    ws = h.createWorksheet(ORDERS);
    await h.writeFile('orders.csv', csv([['C-1', '1', 'New', '01/01/2026']]));
    await h.writeJob('orders', job('upsert'));
    await h.runJob('orders');
    await h.writeFile(
      'orders.csv',
      csv([
        ['C-1', '2', 'New', '01/01/2026'],
        ['C-2', '3', 'New', '01/01/2026'],
      ]),
    );
    await h.writeJob('orders', job('update'));
    const run = await h.runJob('orders');
    expect(run.report).toMatchObject({ updated: 1, created: 0, skipped: 1 });
    expect([...byOrder().keys()]).toEqual(['C-1']);
    expect(byOrder().get('C-1')).toMatchObject({ amount: '2' });
  });

  it('mirror deletes rows the source no longer has, softly, and refuses past the safety share', async () => {
    h = await recreate(h);
    ws = h.createWorksheet(ORDERS);
    const all: Array<[string, string, string, string]> = Array.from({ length: 20 }, (_, i) => [
      `M-${i}`,
      '1',
      'New',
      '01/01/2026',
    ]);
    await h.writeFile('orders.csv', csv(all));
    await h.writeJob('orders', job('mirror'));
    await h.runJob('orders');
    expect(h.emulator.state.rowCount(ws)).toBe(20);

    // 1 of 20 gone (5%): under the default 10% threshold.
    await h.writeFile('orders.csv', csv(all.slice(1)));
    const one = await h.runJob('orders');
    expect(one.record.status).toBe('completed');
    expect(one.report.deleted).toBe(1);
    expect(byOrder().has('M-0')).toBe(false);
    expect(
      h.emulator.state.rows(ws, { includeDeleted: true }).find((r) => r.values.order_no === 'M-0')?.deleted,
    ).toBe(true);

    // 10 of 19 gone: refused, nothing deleted, run failed with the reason.
    await h.writeFile('orders.csv', csv(all.slice(1, 10)));
    const refused = await h.runJob('orders');
    expect(refused.record.status).toBe('failed');
    expect(refused.record.message).toMatch(/refused to delete 10 of 19 rows/);
    expect(h.emulator.state.rowCount(ws)).toBe(19);

    const forced = await h.runJob('orders', { force: true });
    expect(forced.record.status).toBe('completed');
    expect(forced.report.deleted).toBe(10);
    expect(h.emulator.state.rowCount(ws)).toBe(9);
  });

  it('dead-letters rows with bad values, naming field and reason, while all others land', async () => {
    h = await recreate(h);
    ws = h.createWorksheet(ORDERS);
    await h.writeFile(
      'orders.csv',
      csv([
        ['D-1', '10', 'New', '01/01/2026'],
        ['D-2', 'ten', 'New', '01/01/2026'],
        ['D-3', '30', 'Lost', '01/01/2026'],
        ['D-4', '40', 'Paid', '31/02/2026'],
        ['D-5', '50', 'Paid', '05/01/2026'],
      ]) + 'D-6,60,Paid,05/01/2026,one column too many\nD-1,70,Paid,05/01/2026\n',
    );
    await h.writeJob('orders', job('append'));
    const run = await h.runJob('orders');
    expect(run.record.status).toBe('completed');
    expect(run.report).toMatchObject({
      read: 7,
      created: 2,
      deadLetteredTotal: 5,
      deadLettered: { 'invalid-row': 5 },
    });
    expect([...byOrder().keys()].sort()).toEqual(['D-1', 'D-5']);
    const { entries } = await h.rt.deadLetters.list({ runId: run.record.runId });
    const byLine = new Map(entries.map((e) => [e.source.position.line, e]));
    expect(byLine.get(3)).toMatchObject({ category: 'invalid-row', field: 'amount' });
    expect(byLine.get(3)!.message).toMatch(/amount.*Total/);
    expect(byLine.get(4)!.message).toMatch(/status.*"New", "Paid", "Shipped"/);
    expect(byLine.get(5)).toMatchObject({ field: 'placed' });
    expect(byLine.get(8)!.message).toMatch(/duplicate key order_no = "D-1": line 2 has it too/);
    // The same bad rows in the next run replace their dead letters instead of piling up.
    const again = await h.runJob('orders');
    expect(again.report.deadLetteredTotal).toBe(5);
    const after = await h.rt.deadLetters.list({ job: 'orders', limit: 100 });
    expect(after.entries).toHaveLength(5);
    expect(new Set(after.entries.map((e) => e.runId))).toEqual(new Set([again.record.runId]));
    expect(byLine.get(7)!.message).toMatch(/orders\.csv line 7: 5 fields, but the header has 4/);
  });
});

/** A clean emulator app for each test: new credentials, new runtime (its clients hold the old ones). */
async function recreate(h: Harness): Promise<Harness> {
  await h.close();
  return createHarness(`modes${Math.floor(Math.random() * 1e6)}`, { dialect: h.emulator.dialect });
}
