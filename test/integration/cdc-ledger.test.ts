/**
 * The outcome ledger of a change stream stays bounded: outcomes below the acknowledged
 * position are dropped as the stream goes on (they are never replayed), while a batch
 * written but not acknowledged (a crash between the write and the acknowledgement) keeps
 * its outcomes, so its replay writes nothing and counts nothing twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { cdcSourceOf, runCdcConsumer } from '../../src/queue/cdc-consumer.ts';
import type { CdcConsumerOptions } from '../../src/queue/cdc-consumer.ts';
import { setupCdc } from '../../src/sync/cdc/cdc-admin.ts';
import { createCdcState } from '../../src/sync/cdc/cdc-state.ts';
import { stateKey } from '../../src/sync/state/redis-types.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { startPrivatePostgres } from '../helpers/private-postgres.ts';
import type { PrivatePostgres } from '../helpers/private-postgres.ts';

let pgs: PrivatePostgres;
let h: Harness;
let ws: string;

beforeAll(async () => {
  pgs = await startPrivatePostgres();
  await pgs.query(`CREATE ROLE cdc_user LOGIN REPLICATION`);
  await pgs.query(
    `CREATE TABLE public.orders (id serial PRIMARY KEY, order_no text UNIQUE NOT NULL, amount int)`,
  );
  await pgs.query(`ALTER TABLE public.orders OWNER TO cdc_user`);
  await pgs.query(`GRANT CREATE ON DATABASE postgres TO cdc_user`);
  h = await createHarness('cdc-ledger', {}, { ORDERS_DB: pgs.urlAs('cdc_user') });
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
  const admin = new pg.Client({ connectionString: pgs.urlAs('cdc_user') });
  await admin.connect();
  await setupCdc(admin, cdcSourceOf((await h.rt.loadJob('orders')).spec));
  await admin.end();
}, 60_000);

afterAll(async () => {
  await h?.close();
  await pgs?.stop();
});

const drain = (extra: Partial<CdcConsumerOptions> = {}) =>
  runCdcConsumer(h.rt, {
    job: 'orders',
    mode: 'drain',
    holder: 'test',
    signal: new AbortController().signal,
    ...extra,
  });

async function table(): Promise<Map<string, number>> {
  const rows = await pgs.query<{ order_no: string; amount: number }>('SELECT order_no, amount FROM orders');
  return new Map(rows.map((r) => [r.order_no, r.amount]));
}

const sheet = () =>
  h.emulator.state.rows(ws).map((r) => [String(r.values.order_no), Number(r.values.amount)] as const);

/** Bytes the run's ledger holds in Redis (its segments), and how many segments. */
async function ledgerSize(runId: string): Promise<{ segments: number; bytes: number }> {
  const key = stateKey(h.rt.statePrefix, 'run', runId, 'ledger');
  const fields = await h.rt.redis.hgetall(key);
  return {
    segments: Object.keys(fields).length,
    bytes: Object.values(fields).reduce((sum, s) => sum + Buffer.byteLength(s), 0),
  };
}

const writes = () =>
  h.emulator.requests.filter(
    (r) => r.method !== 'GET' && r.path.includes(`/worksheets/${ws}/rows`) && !r.path.endsWith('/list'),
  ).length;

describe('the outcome ledger of a change stream', () => {
  it('stays bounded over many changes, and a batch replayed after a crash writes nothing twice', async () => {
    await pgs.query(
      `INSERT INTO orders (order_no, amount) SELECT 'S-' || g, g FROM generate_series(1, 1000) g`,
    );
    const first = await drain();
    expect(first.snapshotRows).toBe(1000);

    // 9,000 changes in 20 transactions, written in batches of at most 500.
    for (let t = 0; t < 10; t += 1) {
      await pgs.query(
        `INSERT INTO orders (order_no, amount) SELECT 'N-${t}-' || g, g FROM generate_series(1, 500) g`,
      );
      await pgs.query(`UPDATE orders SET amount = amount + 1 WHERE order_no LIKE 'N-${t}-%' AND id % 5 <> 0`);
    }
    const many = await drain();
    expect(many.changes).toBe(10 * 500 + 10 * 400);
    expect(new Map(sheet())).toEqual(await table());
    const position = await createCdcState({ redis: h.rt.redis, prefix: h.rt.statePrefix }).position('orders');
    expect(position?.nextIndex).toBe(1000 + 9000);
    // Unrotated, the ledger would hold 10,000 bytes in 10 segments of 1,024; only the
    // segment the next change falls in is left.
    expect(await ledgerSize(first.runId)).toEqual({ segments: 1, bytes: 10_000 - 9 * 1024 });

    // A crash after the batch is written and before it is acknowledged.
    await pgs.query(
      `INSERT INTO orders (order_no, amount) SELECT 'C-' || g, g FROM generate_series(1, 300) g`,
    );
    let crash = true;
    await expect(
      drain({
        onWritten() {
          if (crash) throw new Error('crashed before the acknowledgement');
        },
      }),
    ).rejects.toThrow(/crashed before the acknowledgement/);
    crash = false;
    const before = { report: await h.rt.runs.report(first.runId), writes: writes() };
    expect(before.report.created).toBe(1000 + 5000 + 300);

    const replay = await drain();
    expect(replay.changes).toBe(300);
    // The replayed batch found its outcomes: no request wrote a row, no counter moved.
    expect(writes()).toBe(before.writes);
    const after = await h.rt.runs.report(first.runId);
    expect({ created: after.created, updated: after.updated, unchanged: after.unchanged }).toEqual({
      created: before.report.created,
      updated: before.report.updated,
      unchanged: before.report.unchanged,
    });
    expect(new Map(sheet())).toEqual(await table());
    expect(new Set(sheet().map(([key]) => key)).size).toBe(sheet().length);
    expect((await ledgerSize(first.runId)).segments).toBeLessThanOrEqual(1);
  }, 240_000);
});
