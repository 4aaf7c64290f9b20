import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { createHarness, REDIS_URL } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const ROWS = 5_000;

type Row = { no: string; amount: string; status: string };
const csv = (rows: readonly Row[]) =>
  ['order_no,amount,status', ...rows.map((r) => `${r.no},${r.amount},${r.status}`)].join('\n') + '\n';

/**
 * Issue 23 §1: an incremental push run finds its rows through the job's key index and
 * asks the platform only about the rows that need it; a full scan of the worksheet
 * happens only to adopt it (first run), with `--full`, or when the index was lost. The
 * runs go through the CLI; requests are those the emulator received.
 */
describe('incremental push runs: requests by what changed, not by worksheet size', () => {
  const children: ChildProcess[] = [];
  let h: Harness;
  let ws: string;
  let rows: Row[];

  const landed = () => h.emulator.state.rows(ws);
  const byNo = () => {
    const out = new Map<string, Array<{ id: string; text: Record<string, string> }>>();
    for (const r of landed()) {
      const no = String(r.values.order_no);
      out.set(no, [...(out.get(no) ?? []), { id: r.id, text: r.text }]);
    }
    return out;
  };
  /** Runs `rowbridge ARGS` and returns its JSON output (if any) and the requests it made. */
  async function cli(args: string[]) {
    const before = h.emulator.requests.length;
    const done = await spawnCli(h, children, args).exited;
    const requests = h.emulator.requests.slice(before);
    return { ...done, requests };
  }
  async function run(...extra: string[]) {
    await h.writeFile('orders.csv', csv(rows));
    const done = await cli(['run', 'orders', '--json', ...extra]);
    expect(done.code, done.stderr).toBe(0);
    const out = JSON.parse(done.stdout) as {
      run: { status: string };
      report: Record<string, unknown> & { keyMatch?: { scan: boolean; reason: string } };
    };
    return { ...out, requests: done.requests };
  }

  beforeAll(async () => {
    h = await createHarness('sync-incr');
    ws = h.createWorksheet({
      name: 'Orders',
      alias: 'orders',
      fields: [
        { name: 'Order number', alias: 'order_no', type: '2', required: true, isTitle: true },
        { name: 'Amount', alias: 'amount', type: '6' },
        { name: 'Status', alias: 'status', type: '2' },
      ],
    });
    rows = Array.from({ length: ROWS }, (_, i) => ({
      no: `O-${String(i).padStart(5, '0')}`,
      amount: String(10 + (i % 97)),
      status: i % 2 === 0 ? 'New' : 'Paid',
    }));
    // The worksheet holds the rows before rowbridge ever ran: the first run adopts them.
    const client = h.rt.clientFor();
    for (let i = 0; i < ROWS; i += 1000) {
      await client.rows.batchCreate(ws, {
        triggerWorkflow: false,
        rows: rows.slice(i, i + 1000).map((r) => ({
          fields: [
            { id: 'order_no', value: r.no },
            { id: 'amount', value: Number(r.amount) },
            { id: 'status', value: r.status },
          ],
        })),
      });
    }
    await h.writeJob(
      'orders',
      `name: orders
source: { type: csv, path: ./orders.csv }
target: { worksheet: orders, mode: upsert, key: order_no, batchSize: 1000, triggerWorkflow: false }
fields: { order_no: order_no, amount: amount, status: status }
`,
    );
  }, 60_000);
  afterEach(() => killChildren(children));
  afterAll(async () => {
    await h?.close();
  });

  it('the first run adopts the existing rows by a full scan and says why', async () => {
    const first = await run();
    expect(first.run.status).toBe('completed');
    expect(first.report).toMatchObject({ read: ROWS, created: 0, unchanged: ROWS });
    expect(first.report.keyMatch).toMatchObject({ scan: true, reason: 'first-run' });
    expect(landed()).toHaveLength(ROWS);
  }, 120_000);

  it('after 3 changed rows, a run makes at most 5 requests and updates those rows in place', async () => {
    const ids = byNo();
    rows[10] = { ...rows[10]!, status: 'Shipped' };
    rows[2_500] = { ...rows[2_500]!, status: 'Shipped' };
    rows[4_999] = { ...rows[4_999]!, amount: '99999' };
    const second = await run();
    expect(second.report).toMatchObject({ read: ROWS, created: 0, updated: 3, unchanged: ROWS - 3 });
    expect(second.report.keyMatch).toMatchObject({ scan: false });
    expect(second.requests.map((r) => `${r.method} ${r.path}`).length).toBeLessThanOrEqual(5);
    const now = byNo();
    expect(now.size).toBe(ROWS);
    expect(now.get(rows[10].no)).toEqual([
      { id: ids.get(rows[10].no)![0]!.id, text: expect.objectContaining({ status: 'Shipped' }) },
    ]);
    expect(now.get(rows[2_500].no)?.[0]?.text.status).toBe('Shipped');
    expect(now.get(rows[4_999].no)?.[0]?.text.amount).toBe('99999');
  }, 120_000);

  it('a row a person added on the worksheet between runs is adopted, not created twice', async () => {
    await h.rt.clientFor().rows.create(ws, {
      triggerWorkflow: false,
      fields: [
        { id: 'order_no', value: 'H-1' },
        { id: 'status', value: 'typed by hand' },
      ],
    });
    const handId = byNo().get('H-1')![0]!.id;
    rows.push({ no: 'H-1', amount: '5', status: 'New' }, { no: 'N-1', amount: '6', status: 'New' });
    const third = await run();
    expect(third.report).toMatchObject({ created: 1, updated: 1, unchanged: ROWS });
    expect(third.report.keyMatch).toMatchObject({ scan: false });
    // Two platform batches of rows to look up at most, one create, one update of H-1.
    expect(third.requests.length).toBeLessThanOrEqual(6);
    const now = byNo();
    expect(now.get('H-1')).toEqual([
      { id: handId, text: expect.objectContaining({ status: 'New', amount: '5' }) },
    ]);
    expect(now.get('N-1')).toHaveLength(1);
    expect(landed()).toHaveLength(ROWS + 2);
  }, 120_000);

  it('a key index lost from Redis means a full scan, and the report says so; no row is doubled', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const keys = await redis.keys(`${h.rt.statePrefix}:index*`);
      expect(keys.length).toBeGreaterThan(0);
      await redis.del(...keys);
    } finally {
      await redis.quit();
    }
    rows[20] = { ...rows[20]!, status: 'Shipped' };
    const fourth = await run();
    expect(fourth.report).toMatchObject({ created: 0, updated: 1, unchanged: ROWS + 1 });
    expect(fourth.report.keyMatch).toMatchObject({ scan: true, reason: 'index-lost' });
    expect(landed()).toHaveLength(ROWS + 2);
    // The scan stamped the index again: the next run without changes reads nothing.
    const fifth = await run();
    expect(fifth.report).toMatchObject({ created: 0, updated: 0, unchanged: ROWS + 2 });
    expect(fifth.report.keyMatch).toMatchObject({ scan: false });
    expect(fifth.requests.length).toBeLessThanOrEqual(2);
  }, 120_000);

  it('--full scans, and says it was asked to', async () => {
    const full = await run('--full');
    expect(full.report).toMatchObject({ created: 0, updated: 0, unchanged: ROWS + 2 });
    expect(full.report.keyMatch).toMatchObject({ scan: true, reason: 'full' });
    expect(full.requests.length).toBeGreaterThan(ROWS / 1000);
  }, 120_000);

  it('dlq replay of one dead letter makes at most 3 requests', async () => {
    rows.push({ no: 'X-1', amount: 'ten', status: 'New' });
    await h.writeFile('orders.csv', csv(rows));
    const bad = await cli(['run', 'orders', '--json']);
    expect(bad.code, bad.stderr).toBe(2);
    const entries = [];
    for await (const e of h.rt.deadLetters.iterate({ job: 'orders' })) entries.push(e);
    expect(entries).toHaveLength(1);
    // The fix: the job no longer maps the amount, so the stored record now lands.
    await h.writeJob(
      'orders',
      `name: orders
source: { type: csv, path: ./orders.csv }
target: { worksheet: orders, mode: upsert, key: order_no, batchSize: 1000, triggerWorkflow: false }
fields: { order_no: order_no, status: status }
`,
    );
    const replay = await cli(['dlq', 'replay', entries[0]!.id]);
    expect(replay.code, replay.stderr + replay.stdout).toBe(0);
    expect(replay.requests.length).toBeLessThanOrEqual(3);
    expect(byNo().get('X-1')).toEqual([
      { id: expect.any(String), text: expect.objectContaining({ status: 'New' }) },
    ]);
    expect(landed()).toHaveLength(ROWS + 3);
  }, 120_000);
});
