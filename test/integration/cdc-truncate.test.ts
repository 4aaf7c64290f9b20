/**
 * TRUNCATE of a captured table. With `deletes: true` the worksheet rows of the table are
 * deleted (a row a person made under a key the table never had stays), and the rows the
 * same transaction inserts after it land; a batch replayed after a crash does not truncate
 * again over the rows written after it. With deletes off the worksheet keeps its rows, as
 * it does for a DELETE, and the stream goes on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { cdcSourceOf, runCdcConsumer } from '../../src/queue/cdc-consumer.ts';
import type { CdcConsumerOptions } from '../../src/queue/cdc-consumer.ts';
import { setupCdc } from '../../src/sync/cdc/cdc-admin.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { startPrivatePostgres } from '../helpers/private-postgres.ts';
import type { PrivatePostgres } from '../helpers/private-postgres.ts';

let pgs: PrivatePostgres;
let h: Harness;
const sheets = new Map<string, string>();

const job = (name: string, table: string, deletes: boolean) =>
  `name: ${name}
source: { type: postgres-cdc, urlEnv: ORDERS_DB, table: public.${table}, keyColumn: id, slot: rb_${name}, publication: rb_${name} }
target: { worksheet: ${name}, mode: upsert, key: order_no, deletes: ${deletes} }
fields: { order_no: order_no, amount: amount }
`;

beforeAll(async () => {
  pgs = await startPrivatePostgres();
  await pgs.query(`CREATE ROLE cdc_user LOGIN REPLICATION`);
  await pgs.query(`GRANT CREATE ON DATABASE postgres TO cdc_user`);
  h = await createHarness('cdc-truncate', {}, { ORDERS_DB: pgs.urlAs('cdc_user') });
  for (const [name, table, deletes] of [
    ['orders', 'orders', true],
    ['kept', 'kept', false],
  ] as const) {
    await pgs.query(
      `CREATE TABLE public.${table} (id serial PRIMARY KEY, order_no text UNIQUE NOT NULL, amount int)`,
    );
    await pgs.query(`ALTER TABLE public.${table} OWNER TO cdc_user`);
    sheets.set(
      name,
      h.createWorksheet({
        name,
        alias: name,
        fields: [
          { name: 'Order no', alias: 'order_no', type: '2', required: true, isTitle: true },
          { name: 'Amount', alias: 'amount', type: '6' },
        ],
      }),
    );
    await h.writeJob(name, job(name, table, deletes));
    const admin = new pg.Client({ connectionString: pgs.urlAs('cdc_user') });
    await admin.connect();
    await setupCdc(admin, cdcSourceOf((await h.rt.loadJob(name)).spec));
    await admin.end();
  }
}, 60_000);

afterAll(async () => {
  await h?.close();
  await pgs?.stop();
});

const drain = (name: string, extra: Partial<CdcConsumerOptions> = {}) =>
  runCdcConsumer(h.rt, {
    job: name,
    mode: 'drain',
    holder: 'test',
    signal: new AbortController().signal,
    ...extra,
  });

const sheet = (name: string) =>
  h.emulator.state
    .rows(sheets.get(name)!)
    .map((r) => [String(r.values.order_no), Number(r.values.amount)] as const)
    .sort(([a], [b]) => a.localeCompare(b));

async function table(name: string): Promise<Array<readonly [string, number]>> {
  const rows = await pgs.query<{ order_no: string; amount: number }>(`SELECT order_no, amount FROM ${name}`);
  return rows.map((r) => [r.order_no, r.amount] as const).sort(([a], [b]) => a.localeCompare(b));
}

describe('TRUNCATE of a captured table', () => {
  it('deletes: true deletes the rows of the table, once, and writes what follows it', async () => {
    await pgs.query(
      `INSERT INTO orders (order_no, amount) SELECT 'S-' || g, g FROM generate_series(1, 120) g`,
    );
    expect((await drain('orders')).snapshotRows).toBe(120);
    // A row a person made, under a key the table never had.
    await h.rt.clientFor().rows.batchCreate(sheets.get('orders')!, {
      rows: [
        {
          fields: [
            { id: 'order_no', value: 'H-1' },
            { id: 'amount', value: 7 },
          ],
        },
      ],
      triggerWorkflow: false,
    });
    await pgs.query(
      `INSERT INTO orders (order_no, amount) SELECT 'U-' || g, g FROM generate_series(1, 10) g`,
    );
    expect((await drain('orders')).changes).toBe(10);
    await pgs.query(`BEGIN;
      INSERT INTO orders (order_no, amount) VALUES ('P-1', 1);
      TRUNCATE orders;
      INSERT INTO orders (order_no, amount) SELECT 'A-' || g, g FROM generate_series(1, 5) g;
      COMMIT`);
    const done = await drain('orders');
    expect(done.deleted).toBe(130);
    expect(sheet('orders')).toEqual(
      [...(await table('orders')), ['H-1', 7] as const].sort(([a], [b]) => a.localeCompare(b)),
    );

    // Crash after the batch is written, before it is acknowledged; the replay must not
    // truncate the rows written after the TRUNCATE again.
    await pgs.query(`BEGIN;
      TRUNCATE orders;
      INSERT INTO orders (order_no, amount) SELECT 'B-' || g, g FROM generate_series(1, 3) g;
      COMMIT`);
    await expect(
      drain('orders', {
        onWritten() {
          throw new Error('crashed before the acknowledgement');
        },
      }),
    ).rejects.toThrow(/crashed before the acknowledgement/);
    const expected = [...(await table('orders')), ['H-1', 7] as const].sort(([a], [b]) => a.localeCompare(b));
    expect(expected.map(([k]) => k)).toEqual(['B-1', 'B-2', 'B-3', 'H-1']);
    expect(sheet('orders')).toEqual(expected);
    const replay = await drain('orders');
    expect(replay.deleted).toBe(0);
    expect(sheet('orders')).toEqual(expected);
  }, 120_000);

  it('deletes off: the worksheet keeps its rows and the stream goes on', async () => {
    await pgs.query(`INSERT INTO kept (order_no, amount) SELECT 'K-' || g, g FROM generate_series(1, 10) g`);
    expect((await drain('kept')).snapshotRows).toBe(10);
    await pgs.query(`TRUNCATE kept`);
    await pgs.query(`INSERT INTO kept (order_no, amount) VALUES ('N-1', 1), ('N-2', 2)`);
    const done = await drain('kept');
    expect(done).toMatchObject({ changes: 3, deleted: 0, deadLettered: 0 });
    expect(sheet('kept').map(([k]) => k)).toEqual([
      'K-1',
      'K-10',
      'K-2',
      'K-3',
      'K-4',
      'K-5',
      'K-6',
      'K-7',
      'K-8',
      'K-9',
      'N-1',
      'N-2',
    ]);
  }, 120_000);
});
