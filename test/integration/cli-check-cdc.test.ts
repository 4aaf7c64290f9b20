/**
 * `rowbridge check JOB` of a postgres-cdc job says exactly what stops change capture, a
 * failed step each, as `rowbridge cdc check` does: wal_level (the machine's shared server
 * runs with replica), a role without REPLICATION, a table without a primary key, the slot
 * and the publication missing, an invalidated slot (its WAL removed past
 * max_slot_wal_keep_size); and passes once all is in place.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { cdcSourceOf } from '../../src/queue/cdc-consumer.ts';
import { setupCdc } from '../../src/sync/cdc/cdc-admin.ts';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { PG_URL } from '../helpers/pg.ts';
import { startPrivatePostgres } from '../helpers/private-postgres.ts';
import type { PrivatePostgres } from '../helpers/private-postgres.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

let pgs: PrivatePostgres;
let h: Harness;
const children: ChildProcess[] = [];

const job = (name: string, source: string) =>
  `name: ${name}
source: { type: postgres-cdc, ${source} }
target: { worksheet: orders, mode: upsert, key: order_no, deletes: true }
fields: { order_no: order_no, amount: amount }
`;

beforeAll(async () => {
  pgs = await startPrivatePostgres(['max_slot_wal_keep_size=1MB']);
  await pgs.query(`CREATE ROLE cdc_user LOGIN REPLICATION`);
  await pgs.query(`CREATE ROLE plain LOGIN`);
  await pgs.query(`CREATE TABLE public.orders (id serial PRIMARY KEY, order_no text NOT NULL, amount int)`);
  await pgs.query(`CREATE TABLE public.loose (order_no text, amount int)`);
  await pgs.query(`GRANT SELECT ON public.loose TO plain`);
  await pgs.query(`ALTER TABLE public.orders OWNER TO cdc_user`);
  await pgs.query(`GRANT CREATE ON DATABASE postgres TO cdc_user`);
  h = await createHarness(
    'check-cdc',
    {},
    { ORDERS_DB: pgs.urlAs('cdc_user'), PLAIN_DB: pgs.urlAs('plain'), SHARED_DB: PG_URL },
  );
  h.createWorksheet({
    name: 'Orders',
    alias: 'orders',
    fields: [
      { name: 'Order no', alias: 'order_no', type: '2', required: true, isTitle: true },
      { name: 'Amount', alias: 'amount', type: '6' },
    ],
  });
  const names = (n: string) => `slot: rb_${n}, publication: rb_${n}`;
  await h.writeJob(
    'cdc-ready',
    job('cdc-ready', `urlEnv: ORDERS_DB, table: public.orders, keyColumn: id, ${names('ready')}`),
  );
  await h.writeJob(
    'cdc-lost',
    job('cdc-lost', `urlEnv: ORDERS_DB, table: public.orders, keyColumn: id, ${names('lost')}`),
  );
  await h.writeJob(
    'cdc-bare',
    job('cdc-bare', `urlEnv: PLAIN_DB, table: public.loose, keyColumn: order_no, ${names('bare')}`),
  );
  await h.writeJob(
    'cdc-replica',
    job(
      'cdc-replica',
      `urlEnv: SHARED_DB, table: public.orders, keyColumn: id, ${names('replica')}, allowPrivilegedSource: true`,
    ),
  );
}, 60_000);

afterEach(() => killChildren(children));
afterAll(async () => {
  killChildren(children);
  await h?.close();
  await pgs?.stop();
});

/** `rowbridge check JOB`, with a Redis nothing answers on: check needs no Redis. */
const check = async (name: string) => {
  const done = await spawnCli(h, children, ['check', name], { REDIS_URL: 'redis://127.0.0.1:9' }).exited;
  return { code: done.code, out: done.stdout + done.stderr };
};

async function setup(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: pgs.urlAs('cdc_user') });
  await admin.connect();
  try {
    await setupCdc(admin, cdcSourceOf((await h.rt.loadJob(name)).spec));
  } finally {
    await admin.end();
  }
}

describe('check JOB of a postgres-cdc job', { timeout: 120_000 }, () => {
  it('names each missing thing: REPLICATION, the primary key, the slot, the publication; exit 1', async () => {
    const { code, out } = await check('cdc-bare');
    expect(code, out).toBe(1);
    expect(out).toMatch(/source\s+ok\s+postgres-cdc \(PLAIN_DB\) reached/);
    expect(out).toMatch(
      /change capture\s+FAILED\s+role plain lacks REPLICATION: ALTER ROLE "plain" REPLICATION/,
    );
    expect(out).toContain('table public.loose has no primary key or replica identity');
    expect(out).toContain('slot rb_bare does not exist: run rowbridge cdc setup cdc-bare');
    expect(out).toContain('publication rb_bare does not exist: run rowbridge cdc setup cdc-bare');
    expect(out).not.toContain('wal_level');
  });

  it('a server without wal_level=logical; exit 1', async () => {
    const { code, out } = await check('cdc-replica');
    expect(code, out).toBe(1);
    expect(out).toMatch(
      /change capture\s+FAILED\s+wal_level is replica, not logical: set wal_level = logical/,
    );
  });

  it('passes once set up, and names an invalidated slot with the command that recovers it', async () => {
    await setup('cdc-ready');
    const ready = await check('cdc-ready');
    expect(ready.code, ready.out).toBe(0);
    expect(ready.out).toMatch(/change capture\s+ok\s+ready: .*slot rb_ready/);

    await setup('cdc-lost');
    await pgs.query(`SELECT pg_drop_replication_slot('rb_ready')`);
    // WAL past max_slot_wal_keep_size (1MB): the next checkpoint invalidates the slot.
    for (let i = 0; i < 3; i += 1) {
      await pgs.query(
        `INSERT INTO orders (order_no, amount) SELECT 'W-' || g, g FROM generate_series(1, 20000) g`,
      );
      await pgs.query('SELECT pg_switch_wal()');
    }
    await pgs.query('CHECKPOINT');
    const [slot] = await pgs.query<{ wal_status: string }>(
      `SELECT wal_status FROM pg_replication_slots WHERE slot_name = 'rb_lost'`,
    );
    expect(slot?.wal_status).toBe('lost');
    const lost = await check('cdc-lost');
    expect(lost.code, lost.out).toBe(1);
    expect(lost.out).toMatch(
      /change capture\s+FAILED\s+slot rb_lost is invalidated .*: run rowbridge run cdc-lost --resnapshot/,
    );
  });
});
