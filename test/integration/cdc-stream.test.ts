/**
 * PostgreSQL change capture end to end, in process: a private server with
 * wal_level=logical, a REPLICATION role, the emulator's worksheet. The snapshot, then
 * mixed transactions of inserts, updates and deletes, counted in the worksheet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { cdcSourceOf, runCdcConsumer } from '../../src/queue/cdc-consumer.ts';
import { setupCdc } from '../../src/sync/cdc/cdc-admin.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { startPrivatePostgres } from '../helpers/private-postgres.ts';
import type { PrivatePostgres } from '../helpers/private-postgres.ts';

let pgs: PrivatePostgres;
let h: Harness;
let ws: string;

const JOB = `name: orders
source: { type: postgres-cdc, urlEnv: ORDERS_DB, table: public.orders, keyColumn: id, slot: rowbridge_orders, publication: rowbridge_orders }
target: { worksheet: orders, mode: upsert, key: order_no, deletes: true }
fields: { order_no: order_no, amount: amount }
`;

beforeAll(async () => {
  pgs = await startPrivatePostgres();
  await pgs.query(`CREATE ROLE cdc_user LOGIN REPLICATION`);
  await pgs.query(
    `CREATE TABLE public.orders (id serial PRIMARY KEY, order_no text UNIQUE NOT NULL, amount int)`,
  );
  await pgs.query(`ALTER TABLE public.orders OWNER TO cdc_user`);
  await pgs.query(`GRANT CREATE ON DATABASE postgres TO cdc_user`);
  h = await createHarness('cdc-stream', {}, { ORDERS_DB: pgs.urlAs('cdc_user'), ORDERS_DB_SU: pgs.url });
  ws = h.createWorksheet({
    name: 'Orders',
    alias: 'orders',
    fields: [
      { name: 'Order no', alias: 'order_no', type: '2', required: true, isTitle: true },
      { name: 'Amount', alias: 'amount', type: '6' },
    ],
  });
  await h.writeJob('orders', JOB);
}, 60_000);

afterAll(async () => {
  await h?.close();
  await pgs?.stop();
});

function worksheet(): Map<string, number> {
  return new Map(h.emulator.state.rows(ws).map((r) => [String(r.values.order_no), Number(r.values.amount)]));
}

async function table(): Promise<Map<string, number>> {
  const rows = await pgs.query<{ order_no: string; amount: number }>('SELECT order_no, amount FROM orders');
  return new Map(rows.map((r) => [r.order_no, r.amount]));
}

const drain = () =>
  runCdcConsumer(h.rt, {
    job: 'orders',
    mode: 'drain',
    holder: 'test',
    signal: new AbortController().signal,
  });

describe('postgres-cdc', () => {
  it('writes the snapshot, then inserts, updates and deletes exactly', async () => {
    await pgs.query(
      `INSERT INTO orders (order_no, amount) SELECT 'S-' || g, g FROM generate_series(1, 300) g`,
    );
    await expect(drain()).rejects.toThrow(
      /publication rowbridge_orders does not exist: run rowbridge cdc setup orders/,
    );
    const admin = new pg.Client({ connectionString: pgs.urlAs('cdc_user') });
    await admin.connect();
    await setupCdc(admin, cdcSourceOf((await h.rt.loadJob('orders')).spec));
    await admin.end();
    const first = await drain();
    expect(first.snapshotRows).toBe(300);
    expect(worksheet()).toEqual(await table());

    await pgs.query(
      `INSERT INTO orders (order_no, amount) SELECT 'N-' || g, g FROM generate_series(1, 500) g`,
    );
    await pgs.query(
      `BEGIN; UPDATE orders SET amount = amount + 1000 WHERE id % 5 = 0; DELETE FROM orders WHERE id % 7 = 0; INSERT INTO orders (order_no, amount) VALUES ('X-1', 1); COMMIT`,
    );
    const second = await drain();
    expect(second.snapshotRows).toBe(0);
    expect(worksheet()).toEqual(await table());
  }, 120_000);

  it('refuses a superuser login unless allowPrivilegedSource, and accepts a REPLICATION role', async () => {
    await h.writeJob(
      'orders_su',
      JOB.replace('name: orders', 'name: orders_su')
        .replace('ORDERS_DB,', 'ORDERS_DB_SU,')
        .replace(/rowbridge_orders/g, 'rowbridge_su'),
    );
    const su = () =>
      runCdcConsumer(h.rt, {
        job: 'orders_su',
        mode: 'drain',
        holder: 'test',
        signal: new AbortController().signal,
      });
    await expect(su()).rejects.toThrow(
      /role postgres is a superuser: connect with a role that has REPLICATION/,
    );
  }, 60_000);
});
