/**
 * No echo between a two-way job and a postgres-cdc job on one table (issue 26 §2): the
 * two-way job's writes to the table carry the replication origin `rowbridge`, and the
 * change stream, which captures the table into the same worksheet, drops them. A private
 * PostgreSQL 15 (wal_level=logical); worksheet writes counted by the emulator's requests,
 * table writes by a trigger.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import { runCdcConsumer } from '../../src/queue/cdc-consumer.ts';
import type { ChildProcess } from 'node:child_process';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { startPrivatePostgres } from '../helpers/private-postgres.ts';
import type { PrivatePostgres } from '../helpers/private-postgres.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

let pgs: PrivatePostgres;
let h: Harness;
let ws: string;
let client: PlatformClient;
const children: ChildProcess[] = [];

const CDC_JOB = `name: orders_cdc
source: { type: postgres-cdc, urlEnv: ORDERS_DB, table: public.orders, keyColumn: id, slot: rowbridge_orders, publication: rowbridge_orders, origin: rowbridge }
target: { worksheet: orders, mode: upsert, key: order_no, deletes: true }
fields: { order_no: order_no, amount: amount }
`;
const SYNC_JOB = `name: orders_sync
source: { type: postgres, urlEnv: TW_DB, table: public.orders, keyColumn: id, origin: rowbridge }
target: { worksheet: orders, mode: two-way, key: order_no, conflict: source }
fields: { order_no: order_no, amount: amount }
`;

beforeAll(async () => {
  pgs = await startPrivatePostgres();
  await pgs.query(`CREATE ROLE cdc_user LOGIN REPLICATION`);
  await pgs.query(`CREATE ROLE tw_user LOGIN`);
  await pgs.query(
    `CREATE TABLE public.orders (id serial PRIMARY KEY, order_no text UNIQUE NOT NULL, amount int)`,
  );
  await pgs.query(`ALTER TABLE public.orders OWNER TO cdc_user`);
  await pgs.query(`GRANT CREATE ON DATABASE postgres TO cdc_user`);
  await pgs.query(`GRANT EXECUTE ON FUNCTION pg_replication_origin_create(text) TO cdc_user`);
  await pgs.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON public.orders TO tw_user`);
  await pgs.query(`GRANT USAGE ON SEQUENCE public.orders_id_seq TO tw_user`);
  await pgs.query(`CREATE TABLE public.writes (n bigint NOT NULL); INSERT INTO public.writes VALUES (0)`);
  await pgs.query(`CREATE FUNCTION public.count_write() RETURNS trigger AS $$ BEGIN
       UPDATE public.writes SET n = n + 1; RETURN NULL; END $$ LANGUAGE plpgsql SECURITY DEFINER`);
  await pgs.query(`CREATE TRIGGER counted AFTER INSERT OR UPDATE OR DELETE ON public.orders
       FOR EACH ROW EXECUTE FUNCTION public.count_write()`);
  h = await createHarness(
    'cdc-two-way',
    { requestLogLimit: 100_000 },
    { ORDERS_DB: pgs.urlAs('cdc_user'), TW_DB: pgs.urlAs('tw_user') },
  );
  ws = h.createWorksheet({
    name: 'Orders',
    alias: 'orders',
    fields: [
      { name: 'Order no', alias: 'order_no', type: '2', required: true, isTitle: true },
      { name: 'Amount', alias: 'amount', type: '6' },
    ],
  });
  client = h.rt.clientFor();
  await h.writeJob('orders_cdc', CDC_JOB);
  await h.writeJob('orders_sync', SYNC_JOB);
}, 60_000);

afterAll(async () => {
  killChildren(children);
  await h?.close();
  await pgs?.stop();
});

const cli = (...args: string[]) => spawnCli(h, children, args).exited;
const sheetWrites = () =>
  h.emulator.requests.filter(
    (r) => r.method !== 'GET' && /\/rows(\/|$)/.test(r.path) && !r.path.endsWith('/list'),
  ).length;
const tableWrites = async () => Number((await pgs.query<{ n: string }>('SELECT n FROM writes'))[0]!.n);
const sheet = () =>
  h.emulator.state.rows(ws).map((r) => [String(r.values.order_no), Number(r.values.amount)] as const);
const table = async () =>
  new Map(
    (await pgs.query<{ order_no: string; amount: number }>('SELECT order_no, amount FROM orders')).map(
      (r) => [r.order_no, r.amount],
    ),
  );
const drain = () =>
  runCdcConsumer(h.rt, {
    job: 'orders_cdc',
    mode: 'drain',
    holder: 'test',
    signal: new AbortController().signal,
  });
async function twoWay(): Promise<void> {
  const { record } = await h.runJob('orders_sync');
  expect(record.status, record.message).toBe('completed');
}

describe('a two-way job and a postgres-cdc job on one table', () => {
  it('check says what the writing login lacks; cdc setup creates the origin', async () => {
    const lacking = await cli('check', 'orders_sync', '--json');
    const step = (out: string) =>
      (JSON.parse(out) as { steps: Array<{ name: string; ok: boolean; detail: string }> }).steps.find(
        (s) => s.name === 'replication origin',
      );
    expect(step(lacking.stdout)).toMatchObject({ ok: false });
    expect(step(lacking.stdout)?.detail).toContain(
      'GRANT EXECUTE ON FUNCTION pg_replication_origin_session_setup(text), pg_replication_origin_session_reset(), pg_replication_origin_create(text) TO "tw_user"',
    );
    const setup = await cli('cdc', 'setup', 'orders_cdc');
    expect(setup.stdout + setup.stderr).toContain('created replication origin rowbridge');
    expect(setup.code).toBe(0);
    await pgs.query(
      `GRANT EXECUTE ON FUNCTION pg_replication_origin_session_setup(text), pg_replication_origin_session_reset() TO tw_user`,
    );
    const ready = await cli('check', 'orders_sync', '--json');
    expect(step(ready.stdout)).toMatchObject({ ok: true });
    expect(step(ready.stdout)?.detail).toContain('marked with origin rowbridge');
    expect(step(ready.stdout)?.detail).toContain('dropped by orders_cdc');
    // A two-way job on the captured table without the stream's origin would get echoes.
    await h.writeJob(
      'orders_echo',
      SYNC_JOB.replace('orders_sync', 'orders_echo').replace(', origin: rowbridge', ''),
    );
    const echo = await cli('check', 'orders_echo', '--json');
    expect(step(echo.stdout)).toMatchObject({ ok: false });
    expect(step(echo.stdout)?.detail).toContain(
      "postgres-cdc job orders_cdc captures public.orders and drops origin rowbridge only: it would write this job's writes back to the worksheet; set source.origin: rowbridge on this job",
    );
  }, 120_000);

  it("drops the two-way job's writes from the stream, and streams a person's update once", async () => {
    await pgs.query(
      `INSERT INTO orders (order_no, amount) SELECT 'P-' || g, g FROM generate_series(1, 20) g`,
    );
    expect((await drain()).snapshotRows).toBe(20);
    await twoWay();
    expect(new Map(sheet())).toEqual(await table());

    // A person works in the worksheet: 10 new rows, 5 amounts changed.
    const rows = h.emulator.state.rows(ws);
    await client.rows.batchCreate(ws, {
      rows: Array.from({ length: 10 }, (_, i) => ({
        fields: [
          { id: 'order_no', value: `W-${i}` },
          { id: 'amount', value: 500 + i },
        ],
      })),
    });
    for (const row of rows.slice(0, 5))
      await client.rows.update(ws, row.id, { fields: [{ id: 'amount', value: 7000 }] });
    const tableBefore = await tableWrites();
    await twoWay();
    // The two-way job wrote them to the table: 10 inserts and 5 updates, with its origin.
    expect((await tableWrites()) - tableBefore).toBe(15);
    expect(new Map(sheet())).toEqual(await table());

    const [{ lsn }] = (await pgs.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')) as [
      { lsn: string },
    ];
    const sheetBefore = sheetWrites();
    const echo = await drain();
    expect(echo.changes).toBe(0);
    expect(sheetWrites() - sheetBefore).toBe(0);
    // Read and dropped, not merely not yet read: the slot is confirmed past those writes.
    const [slot] = await pgs.query<{ past: boolean }>(
      `SELECT confirmed_flush_lsn >= $1::pg_lsn AS past FROM pg_replication_slots WHERE slot_name = 'rowbridge_orders'`,
      [lsn],
    );
    expect(slot?.past).toBe(true);

    // A person's own update in the table reaches the worksheet, exactly once.
    await pgs.query(`UPDATE orders SET amount = 999 WHERE order_no = 'P-7'`);
    // The first drain after it delivers it: it was committed before the drain started.
    const person = await drain();
    const positions = await pgs.query(
      `SELECT confirmed_flush_lsn::text AS confirmed, pg_current_wal_lsn()::text AS current FROM pg_replication_slots WHERE slot_name = 'rowbridge_orders'`,
    );
    expect(person.changes, JSON.stringify({ person, positions })).toBe(1);
    expect(sheetWrites() - sheetBefore).toBe(1);
    expect(new Map(sheet()).get('P-7')).toBe(999);
    expect(sheet()).toHaveLength(30);
    expect(new Map(sheet())).toEqual(await table());

    // The two-way job finds both sides equal: nothing written on either side.
    const quiet = { table: await tableWrites(), sheet: sheetWrites() };
    await twoWay();
    expect({ table: await tableWrites(), sheet: sheetWrites() }).toEqual(quiet);
  }, 180_000);
});
