/**
 * A column name mistyped in a SQL source (`cursorColumn: updatedat`) fails `run` with the
 * column it most likely meant (issue 23 §4), on PostgreSQL and on MariaDB.
 */
import type { ChildProcess } from 'node:child_process';
import mysql from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { PG_URL, pgQuery } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const SCHEMA = `rbtypo_${process.pid}`;
const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const MY_TABLE = `rbtypo_${process.pid}`;

describe('a mistyped SQL column', { timeout: 120_000 }, () => {
  let h: Harness;
  let ws: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    await pgQuery(
      `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`,
      `CREATE SCHEMA ${SCHEMA}`,
      `CREATE TABLE ${SCHEMA}.orders (order_id int PRIMARY KEY, updated_at int NOT NULL)`,
      `INSERT INTO ${SCHEMA}.orders VALUES (41, 1), (42, 2)`,
    );
    const my = await mysql.createConnection(MYSQL_URL);
    await my.query(`DROP TABLE IF EXISTS ${MY_TABLE}`);
    await my.query(`CREATE TABLE ${MY_TABLE} (order_id int PRIMARY KEY, updated_at int NOT NULL)`);
    await my.query(`INSERT INTO ${MY_TABLE} VALUES (41, 1), (42, 2)`);
    await my.end();
    h = await createHarness('sqltypo', {}, { ORDERS_PG: PG_URL, ORDERS_MY: MYSQL_URL });
    ws = h.createWorksheet({
      name: 'Orders',
      alias: 'orders',
      fields: [{ name: 'No', alias: 'no', type: 'Text', required: true, isTitle: true }],
    });
    const job = (name: string, source: string) =>
      h.writeJob(
        name,
        `name: ${name}\nsource: ${source}\ntarget: { worksheet: orders, mode: upsert, key: no }\nfields: { no: order_id }\n`,
      );
    await job(
      'pg-typo',
      `{ type: postgres, urlEnv: ORDERS_PG, allowPrivilegedSource: true, table: ${SCHEMA}.orders, cursorColumn: updatedat, keyColumn: order_id }`,
    );
    await job(
      'my-typo',
      `{ type: mysql, urlEnv: ORDERS_MY, allowPrivilegedSource: true, table: ${MY_TABLE}, cursorColumn: updatedat, keyColumn: order_id }`,
    );
  });
  afterEach(() => killChildren(children));
  afterAll(async () => {
    await h.close();
    await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    const my = await mysql.createConnection(MYSQL_URL);
    await my.query(`DROP TABLE IF EXISTS ${MY_TABLE}`);
    await my.end();
  });

  it.each([
    ['pg-typo', /updatedat.*updated_at/],
    ['my-typo', /updatedat.*\(source\.cursorColumn\); did you mean updated_at\?/],
  ])('%s: run fails naming the column it most likely meant, and writes nothing', async (job, said) => {
    const done = await spawnCli(h, children, ['run', job]).exited;
    expect(done.code).toBe(1);
    expect(done.stderr).toMatch(said);
    expect(h.emulator.state.rowCount(ws)).toBe(0);
  });
});
