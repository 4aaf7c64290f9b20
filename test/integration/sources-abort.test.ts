import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { createSource } from '../../src/sync/sources/create-source.ts';
import type { SourceSpec } from '../../src/sync/sources/source-spec.ts';
import { collect, createTempDir, rejection } from '../fixtures/sources/source-test-kit.ts';

const PG = 'postgres://root@127.0.0.1:5432/test';
const MY = 'mysql://root@127.0.0.1:3306/test';
// A marker in each query, so the test finds its own statement among the server's.
const marker = `rb_abort_${process.pid}_${Date.now()}`;
let pgAdmin: pg.Client;
let myAdmin: mysql.Connection;
let tmp: Awaited<ReturnType<typeof createTempDir>>;

beforeAll(async () => {
  pgAdmin = new pg.Client({ connectionString: PG });
  await pgAdmin.connect();
  myAdmin = await mysql.createConnection({ uri: MY });
  tmp = await createTempDir('abort');
});
afterAll(async () => {
  // Whatever a failed test left running is stopped here, not 30 s later.
  await pgAdmin.query(
    `SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()`,
    [`%${marker}%`],
  );
  await pgAdmin.end();
  await myAdmin.end();
  await tmp.remove();
});

/** Polls until `check` holds (at most ~5 s, the test's own limit). */
async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 250; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('condition not met');
}

const pgRunning = async () =>
  (
    await pgAdmin.query(
      `SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()`,
      [`%${marker}%`],
    )
  ).rowCount !== 0;
const myRunning = async () => {
  const [rows] = await myAdmin.query(
    `SELECT 1 FROM information_schema.processlist WHERE info LIKE ? AND id <> CONNECTION_ID()`,
    [`%${marker}%`],
  );
  return (rows as unknown[]).length > 0;
};

/** Starts reading `spec`; returns the pending read and the controller that aborts it. */
function startRead(spec: SourceSpec, env: Record<string, string> = {}) {
  const controller = new AbortController();
  const read = rejection(collect(createSource(spec, { env, baseDir: tmp.dir, signal: controller.signal })));
  return { controller, read };
}

describe('an aborted run stops its source', () => {
  it('postgres: the query in flight is cancelled on the server and the read ends with the abort', async () => {
    const { controller, read } = startRead(
      {
        type: 'postgres',
        urlEnv: 'PG_ABORT_URL',
        allowPrivilegedSource: true,
        query: `SELECT 1 AS id, pg_sleep(30)::text AS ${marker}`,
        cursorColumn: 'id',
      },
      { PG_ABORT_URL: PG },
    );
    await until(pgRunning);
    controller.abort(new Error('worker stopping'));
    expect((await read).message).toBe('worker stopping');
    await until(async () => !(await pgRunning()));
  });

  it('mysql: the query in flight is killed on the server and the read ends with the abort', async () => {
    const { controller, read } = startRead(
      {
        type: 'mysql',
        urlEnv: 'MY_ABORT_URL',
        allowPrivilegedSource: true,
        query: `SELECT 1 AS id, SLEEP(30) AS ${marker}`,
        cursorColumn: 'id',
      },
      { MY_ABORT_URL: MY },
    );
    await until(myRunning);
    controller.abort(new Error('worker stopping'));
    expect((await read).message).toBe('worker stopping');
    await until(async () => !(await myRunning()));
  });

  it('a file source stops between records', async () => {
    const lines = Array.from({ length: 50_000 }, (_, i) => JSON.stringify({ id: i })).join('\n');
    await tmp.write('many.ndjson', `${lines}\n`);
    const controller = new AbortController();
    const source = createSource(
      { type: 'ndjson', path: 'many.ndjson' },
      { env: {}, baseDir: tmp.dir, signal: controller.signal },
    );
    let read = 0;
    const err = await rejection(
      (async () => {
        for await (const _ of source) if (++read === 10) controller.abort(new Error('worker stopping'));
      })(),
    );
    expect(err.message).toBe('worker stopping');
    expect(read).toBe(10);
  });
});
