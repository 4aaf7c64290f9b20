/**
 * Change capture as an operator runs it: `rowbridge cdc check|setup`, then workers
 * (`rowbridge worker`) streaming a private PostgreSQL's changes while the one holding the
 * slot is killed with SIGKILL three times. 10,000 inserts, 2,000 updates and 500 deletes
 * in mixed transactions must leave the worksheet equal to the table, no row twice, and
 * the slot confirmed up to the server's WAL.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCdcState } from '../../src/sync/cdc/cdc-state.ts';
import { killChildren, spawnCli, until } from '../helpers/cli-process.ts';
import { startPrivatePostgres } from '../helpers/private-postgres.ts';
import type { PrivatePostgres } from '../helpers/private-postgres.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

let pgs: PrivatePostgres;
let h: Harness;
let ws: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  pgs = await startPrivatePostgres();
  await pgs.query(`CREATE ROLE cdc_user LOGIN REPLICATION`);
  await pgs.query(
    `CREATE TABLE public.orders (id serial PRIMARY KEY, order_no text UNIQUE NOT NULL, amount int)`,
  );
  await pgs.query(`ALTER TABLE public.orders OWNER TO cdc_user`);
  await pgs.query(`GRANT CREATE ON DATABASE postgres TO cdc_user`);
  h = await createHarness('cdc-workers', {}, { ORDERS_DB: pgs.urlAs('cdc_user') });
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

const cli = (...args: string[]) => spawnCli(h, children, args).exited;

/** Transaction n: 100 inserts, 20 updates and 5 deletes of rows inserted earlier. */
async function transaction(n: number): Promise<void> {
  const base = n * 100;
  await pgs.query(`BEGIN;
    INSERT INTO orders (order_no, amount) SELECT 'O-' || (${base} + g), g FROM generate_series(1, 100) g;
    UPDATE orders SET amount = amount + 1000 WHERE id IN (SELECT id FROM orders WHERE amount < 1000 ORDER BY id DESC LIMIT 20);
    DELETE FROM orders WHERE id IN (SELECT id FROM orders ORDER BY id LIMIT 5 OFFSET ${n});
    COMMIT`);
}

describe('postgres-cdc with workers', () => {
  it('says what is missing, sets up, and streams exactly through three SIGKILLs', async () => {
    const missing = await cli('cdc', 'check', 'orders');
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain('slot rowbridge_orders does not exist: run rowbridge cdc setup orders');
    expect(missing.stdout).toContain('publication rowbridge_orders does not exist');
    const setup = await cli('cdc', 'setup', 'orders');
    expect(setup.code).toBe(0);
    expect(setup.stdout).toContain('created logical slot rowbridge_orders (pgoutput)');
    expect((await cli('cdc', 'check', 'orders')).code).toBe(0);

    const state = createCdcState({ redis: h.rt.redis, prefix: h.rt.statePrefix });
    const workers = new Map<number, ChildProcess>();
    const startWorker = () => {
      const w = spawnCli(h, children, ['worker', '--no-schedules']);
      workers.set(w.child.pid!, w.child);
    };
    startWorker();
    startWorker();
    const holderPid = async () => Number((await state.lockHolder('rowbridge_orders'))?.split(':').pop());
    await until(
      async () => (await state.status('orders'))?.state === 'streaming',
      60_000,
      'a worker to stream',
    );

    let kills = 0;
    for (let n = 0; n < 100; n += 1) {
      await transaction(n);
      if (n === 20 || n === 50 || n === 80) {
        // Kill the one streaming while it has a backlog to write.
        // The lock of the one killed before expires first: another worker takes over.
        await until(async () => workers.has(await holderPid()), 60_000, 'a live worker to hold the slot');
        const pid = await holderPid();
        workers.get(pid)!.kill('SIGKILL');
        workers.delete(pid);
        kills += 1;
        startWorker();
      }
    }
    expect(kills).toBe(3);
    const table = async () =>
      new Map(
        (await pgs.query<{ order_no: string; amount: number }>('SELECT order_no, amount FROM orders')).map(
          (r) => [r.order_no, r.amount],
        ),
      );
    const expected = await table();
    expect(expected.size).toBe(10_000 - 500);
    const sheet = () =>
      h.emulator.state.rows(ws).map((r) => [String(r.values.order_no), Number(r.values.amount)] as const);
    await until(() => sheet().length === expected.size, 180_000, 'the worksheet to hold every row');
    await until(
      () => JSON.stringify([...new Map(sheet())].sort()) === JSON.stringify([...expected].sort()),
      60_000,
      'the worksheet to equal the table',
    );
    expect(new Set(sheet().map(([key]) => key)).size).toBe(sheet().length);

    // The slot is confirmed up to the server's WAL: it keeps none back.
    await until(
      async () => {
        const [slot] = await pgs.query<{ lag: string }>(
          `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::text AS lag FROM pg_replication_slots WHERE slot_name = 'rowbridge_orders'`,
        );
        return slot !== undefined && Number(slot.lag) < 1024 * 1024;
      },
      60_000,
      'the confirmed position to reach the WAL end',
    );
    const status = await cli('cdc', 'status', 'orders');
    expect(status.stdout).toMatch(/slot: streaming, confirmed [0-9A-F]+\/[0-9A-F]+, lag \d+ bytes/);
    // A second consumer is refused while a worker holds the slot.
    expect((await cli('run', 'orders')).code).toBe(75);
  }, 420_000);
});
