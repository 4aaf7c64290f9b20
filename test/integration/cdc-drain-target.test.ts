/**
 * A drain (`rowbridge run JOB` of a postgres-cdc job) delivers every change committed
 * before it started, exactly once, and still ends when nothing is left to deliver. A
 * private PostgreSQL 15 (wal_level=logical) with `synchronous_commit=off`, as the other
 * CDC tests run it: a committed transaction's WAL may not be written yet when the drain
 * starts, which is where a drain that stopped at `pg_current_wal_lsn()` ended early
 * (drain-target.ts).
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

const JOB = `name: drain_orders
source: { type: postgres-cdc, urlEnv: DRAIN_DB, table: public.orders, keyColumn: id, slot: rowbridge_drain, publication: rowbridge_drain, origin: rowbridge }
target: { worksheet: orders, mode: upsert, key: order_no, deletes: true }
fields: { order_no: order_no, amount: amount }
`;

beforeAll(async () => {
  // The WAL writer's pace at 1 s (200 ms by default) widens the window in which a committed
  // transaction's WAL is not written yet: the drain of each round starts inside it.
  pgs = await startPrivatePostgres(['wal_writer_delay=1000ms']);
  await pgs.query(`CREATE ROLE cdc_user LOGIN REPLICATION`);
  await pgs.query(
    `CREATE TABLE public.orders (id serial PRIMARY KEY, order_no text UNIQUE NOT NULL, amount int)`,
  );
  await pgs.query(`CREATE TABLE public.other (id int PRIMARY KEY, n int)`);
  await pgs.query(`INSERT INTO public.other VALUES (1, 0)`);
  await pgs.query(`ALTER TABLE public.orders OWNER TO cdc_user`);
  await pgs.query(`GRANT CREATE ON DATABASE postgres TO cdc_user`);
  await pgs.query(`GRANT EXECUTE ON FUNCTION pg_replication_origin_create(text) TO cdc_user`);
  await pgs.query(`SELECT pg_replication_origin_create('rowbridge')`);
  h = await createHarness('cdc-drain-target', {}, { DRAIN_DB: pgs.urlAs('cdc_user') });
  ws = h.createWorksheet({
    name: 'Orders',
    alias: 'orders',
    fields: [
      { name: 'Order no', alias: 'order_no', type: '2', required: true, isTitle: true },
      { name: 'Amount', alias: 'amount', type: '6' },
    ],
  });
  await h.writeJob('drain_orders', JOB);
  await pgs.query(`INSERT INTO orders (order_no, amount) SELECT 'D-' || g, g FROM generate_series(1, 5) g`);
  const admin = new pg.Client({ connectionString: pgs.urlAs('cdc_user') });
  await admin.connect();
  await setupCdc(admin, cdcSourceOf((await h.rt.loadJob('drain_orders')).spec));
  await admin.end();
}, 60_000);

afterAll(async () => {
  await h?.close();
  await pgs?.stop();
});

const drain = () =>
  runCdcConsumer(h.rt, {
    job: 'drain_orders',
    mode: 'drain',
    holder: 'test',
    signal: new AbortController().signal,
  });
const sheetWrites = () =>
  h.emulator.requests.filter(
    (r) => r.method !== 'GET' && /\/rows(\/|$)/.test(r.path) && !r.path.endsWith('/list'),
  ).length;
const amountOf = (orderNo: string) =>
  h.emulator.state.rows(ws).find((r) => String(r.values.order_no) === orderNo)?.values.amount;

describe('a drain', () => {
  it('delivers an update committed just before it started, each time, exactly once', async () => {
    expect((await drain()).snapshotRows).toBe(5);
    const ROUNDS = 20;
    const misses: Array<{ round: number; changes: number; writes: number }> = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      const before = sheetWrites();
      await pgs.query(`UPDATE orders SET amount = $1 WHERE order_no = 'D-3'`, [1000 + round]);
      const summary = await drain();
      const writes = sheetWrites() - before;
      if (summary.changes !== 1 || writes !== 1) misses.push({ round, changes: summary.changes, writes });
    }
    expect(misses, `${misses.length} of ${ROUNDS} drains did not deliver their update once`).toEqual([]);
    expect(amountOf('D-3')).toBe(1000 + ROUNDS);
  }, 120_000);

  it('delivers a transaction whose commit record directly follows the position a drain confirmed', async () => {
    // Its update is written to the WAL before the other transaction commits, its commit
    // record right after the position the first drain acknowledges.
    const open = new pg.Client({ connectionString: pgs.url });
    await open.connect();
    try {
      await open.query('BEGIN');
      await open.query(`UPDATE orders SET amount = 71 WHERE order_no = 'D-1'`);
      await pgs.query(`UPDATE orders SET amount = 72 WHERE order_no = 'D-2'`);
      expect((await drain()).changes).toBe(1);
      const [{ confirmed, saved }] = (await pgs.query<{ confirmed: string; saved: string }>(
        `SELECT confirmed_flush_lsn::text AS confirmed, pg_current_wal_insert_lsn()::text AS saved FROM pg_replication_slots WHERE slot_name = 'rowbridge_drain'`,
      )) as [{ confirmed: string; saved: string }];
      await open.query('COMMIT');
      const next = await drain();
      expect(next.changes, JSON.stringify({ confirmed, saved })).toBe(1);
      expect(amountOf('D-1')).toBe(71);
      expect(amountOf('D-2')).toBe(72);
    } finally {
      await open.end();
    }
  }, 60_000);

  it('ends before an open transaction whose rows are in the WAL, and the next drain delivers it once', async () => {
    await pgs.query(`UPDATE orders SET amount = 81 WHERE order_no = 'D-2'`);
    // Written after the last commit and not flushed while the transaction stays open: the
    // insert position at the drain's start is past what the stream can read.
    const open = new pg.Client({ connectionString: pgs.url });
    await open.connect();
    try {
      await open.query('BEGIN');
      await open.query(`UPDATE orders SET amount = 82 WHERE order_no = 'D-5'`);
      expect((await drain()).changes).toBe(1);
      expect(amountOf('D-2')).toBe(81);
      await open.query('COMMIT');
      expect((await drain()).changes).toBe(1);
      expect(amountOf('D-5')).toBe(82);
    } finally {
      await open.end();
    }
  }, 60_000);

  it('ends when the only WAL after its position is other tables and dropped transactions', async () => {
    // A two-way job's writes: marked with the origin the stream drops.
    const marked = new pg.Client({ connectionString: pgs.url });
    await marked.connect();
    try {
      await marked.query(`SELECT pg_replication_origin_session_setup('rowbridge')`);
      for (let round = 0; round < 5; round += 1) {
        await pgs.query(`UPDATE other SET n = n + 1`);
        await marked.query(`UPDATE orders SET amount = amount + 1 WHERE order_no = 'D-4'`);
        const before = sheetWrites();
        // A drain waiting for a position it cannot reach would run into the test's timeout.
        expect((await drain()).changes).toBe(0);
        expect(sheetWrites() - before).toBe(0);
      }
    } finally {
      await marked.end();
    }
  }, 60_000);
});
