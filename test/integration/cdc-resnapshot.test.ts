/**
 * Starting a change-capture job over (issue 26 §2), from the CLI as an operator does it:
 * `rowbridge run JOB --resnapshot` makes a new slot and a new snapshot, and an invalidated
 * slot (its WAL removed past max_slot_wal_keep_size on a private PostgreSQL 15) fails the
 * run loudly, naming the slot, with exit code 1, until `--resnapshot` recovers it. Rows
 * are counted in the worksheet, writes in the emulator's request log.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { startPrivatePostgres } from '../helpers/private-postgres.ts';
import type { PrivatePostgres } from '../helpers/private-postgres.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

let pgs: PrivatePostgres;
let h: Harness;
let ws: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  pgs = await startPrivatePostgres(['max_slot_wal_keep_size=1MB']);
  await pgs.query(`CREATE ROLE cdc_user LOGIN REPLICATION`);
  await pgs.query(
    `CREATE TABLE public.orders (id serial PRIMARY KEY, order_no text UNIQUE NOT NULL, amount int)`,
  );
  await pgs.query(`ALTER TABLE public.orders OWNER TO cdc_user`);
  await pgs.query(`GRANT CREATE ON DATABASE postgres TO cdc_user`);
  // Not in the publication: only there to fill the WAL.
  await pgs.query(`CREATE TABLE public.filler (id serial PRIMARY KEY, pad text)`);
  h = await createHarness(
    'cdc-resnapshot',
    { requestLogLimit: 100_000 },
    { ORDERS_DB: pgs.urlAs('cdc_user') },
  );
  ws = h.createWorksheet({
    name: 'Orders',
    alias: 'orders',
    fields: [
      { name: 'Order no', alias: 'order_no', type: '2', required: true, isTitle: true },
      { name: 'Amount', alias: 'amount', type: '6' },
    ],
  });
  await h.writeJob(
    'orders',
    `name: orders
source: { type: postgres-cdc, urlEnv: ORDERS_DB, table: public.orders, keyColumn: id, slot: rowbridge_orders, publication: rowbridge_orders }
target: { worksheet: orders, mode: upsert, key: order_no, deletes: true }
fields: { order_no: order_no, amount: amount }
`,
  );
}, 60_000);

afterAll(async () => {
  killChildren(children);
  await h?.close();
  await pgs?.stop();
});

interface Summary {
  runId: string;
  snapshotRows: number;
  changes: number;
  deleted: number;
  deadLettered: number;
}

const cli = (...args: string[]) => spawnCli(h, children, args).exited;
/** `rowbridge run orders --json ARGS`, which must exit 0: its summary. */
async function run(...args: string[]): Promise<Summary> {
  const done = await cli('run', 'orders', '--json', ...args);
  expect(done.code, done.stderr).toBe(0);
  return JSON.parse(done.stdout.trim().split('\n').at(-1)!) as Summary;
}
const sheetWrites = () =>
  h.emulator.requests.filter(
    (r) => r.method !== 'GET' && /\/rows(\/|$)/.test(r.path) && !r.path.endsWith('/list'),
  ).length;
const sheetRows = () =>
  h.emulator.state.rows(ws).map((r) => [String(r.values.order_no), Number(r.values.amount)] as const);
const sheet = () => new Map(sheetRows());
const table = async () =>
  new Map(
    (await pgs.query<{ order_no: string; amount: number }>('SELECT order_no, amount FROM orders')).map(
      (r) => [r.order_no, r.amount],
    ),
  );
const walStatus = async () =>
  (
    await pgs.query<{ wal_status: string }>(
      `SELECT wal_status FROM pg_replication_slots WHERE slot_name = 'rowbridge_orders'`,
    )
  )[0]?.wal_status;

describe('postgres-cdc started over', () => {
  it('run --resnapshot takes a new slot and snapshot: the worksheet equals the table, no row twice', async () => {
    await pgs.query(
      `INSERT INTO orders (order_no, amount) SELECT 'S-' || g, g FROM generate_series(1, 300) g`,
    );
    expect((await cli('cdc', 'setup', 'orders')).code).toBe(0);
    const first = await run();
    expect(first.snapshotRows).toBe(300);
    expect(sheet()).toEqual(await table());

    await pgs.query(`UPDATE orders SET amount = amount + 1000 WHERE id % 6 = 0`);
    await pgs.query(
      `INSERT INTO orders (order_no, amount) SELECT 'R-' || g, g FROM generate_series(1, 100) g`,
    );
    const again = await run('--resnapshot');
    expect(again.snapshotRows).toBe(400);
    expect(again.runId).not.toBe(first.runId);
    expect(sheet()).toEqual(await table());
    expect(sheetRows()).toHaveLength(400);

    // Streaming goes on from the new slot: one insert and one update, each written once.
    await pgs.query(`INSERT INTO orders (order_no, amount) VALUES ('A-1', 1)`);
    await pgs.query(`UPDATE orders SET amount = 5 WHERE order_no = 'S-5'`);
    const after = await run();
    expect(after).toMatchObject({ runId: again.runId, snapshotRows: 0, changes: 2 });
    expect(sheet()).toEqual(await table());
    expect(sheetRows()).toHaveLength(401);
  }, 180_000);

  it('an invalidated slot fails the run naming it (exit 1), and --resnapshot recovers', async () => {
    // Changes made while nobody reads the slot, then WAL past max_slot_wal_keep_size (1MB).
    await pgs.query(`UPDATE orders SET amount = amount + 7 WHERE order_no LIKE 'R-%' AND id % 10 = 0`);
    await pgs.query(
      `INSERT INTO orders (order_no, amount) SELECT 'L-' || g, g FROM generate_series(1, 20) g`,
    );
    const gone = (await pgs.query<{ order_no: string }>(`SELECT order_no FROM orders WHERE id % 50 = 1`)).map(
      (r) => r.order_no,
    );
    await pgs.query(`DELETE FROM orders WHERE id % 50 = 1`);
    for (let round = 0; round < 5 && (await walStatus()) !== 'lost'; round += 1) {
      for (let i = 0; i < 3; i += 1) {
        await pgs.query(`INSERT INTO filler (pad) SELECT repeat('x', 200) FROM generate_series(1, 20000)`);
        await pgs.query('SELECT pg_switch_wal()');
      }
      await pgs.query('CHECKPOINT');
    }
    expect(await walStatus()).toBe('lost');

    const writesBefore = sheetWrites();
    const failed = await cli('run', 'orders');
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      /slot rowbridge_orders is invalidated .*: run rowbridge run orders --resnapshot/,
    );
    expect(sheetWrites()).toBe(writesBefore);
    const status = await cli('cdc', 'status', 'orders');
    expect(status.stdout).toContain('INVALIDATED (rowbridge run orders --resnapshot)');
    expect(status.stdout).toMatch(/stream: failed.*\n\s+error: .*slot rowbridge_orders is invalidated/);

    const recovered = await run('--resnapshot');
    expect(await walStatus()).not.toBe('lost');
    const expected = await table();
    expect(recovered.snapshotRows).toBe(expected.size);
    // Every row of the table, once, with its value; rows deleted while the slot was lost
    // stay in the worksheet (a snapshot sees no deletes, docs/cdc.md).
    const rows = sheetRows();
    expect(new Set(rows.map(([key]) => key)).size).toBe(rows.length);
    const now = sheet();
    for (const [key, amount] of expected) expect(now.get(key), key).toBe(amount);
    expect(gone.length).toBeGreaterThan(0);
    expect([...now.keys()].filter((key) => !expected.has(key)).sort()).toEqual([...gone].sort());

    // Streaming again: a delete now reaches the worksheet.
    await pgs.query(`DELETE FROM orders WHERE order_no = 'L-3'`);
    expect(await run()).toMatchObject({ runId: recovered.runId, changes: 1, deleted: 1 });
    expect(sheet().has('L-3')).toBe(false);
  }, 240_000);
});
