/**
 * Attack: a postgres source's `query:` ran a second statement (`…; DROP TABLE …`). A
 * source query must be one statement, read-only, under a statement timeout, for
 * Postgres and MySQL/MariaDB alike; the job spec check names the file and the field.
 */
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJobSpec } from '../../src/sync/job-spec/load-job-spec.ts';
import { createSource } from '../../src/sync/sources/create-source.ts';
import type { SourceSpec } from '../../src/sync/sources/source-spec.ts';
import { collect, rejection } from '../fixtures/sources/source-test-kit.ts';
import { PG_URL, pgQuery } from '../helpers/pg.ts';

const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const schema = `rb_sec_sql_${process.pid}`;
const env = { SEC_PG: PG_URL, SEC_MY: MYSQL_URL };

const jobText = (query: string) => `name: orders
source: { type: postgres, urlEnv: SEC_PG, allowPrivilegedSource: true, cursorColumn: id, query: ${JSON.stringify(query)} }
target: { worksheet: orders, mode: append }
fields:
  id: Id
`;

describe('source queries run one read-only statement', () => {
  let my: mysql.Connection;

  beforeAll(async () => {
    await pgQuery(
      `DROP SCHEMA IF EXISTS ${schema} CASCADE`,
      `CREATE SCHEMA ${schema}`,
      `CREATE TABLE ${schema}.items (id int PRIMARY KEY)`,
      `CREATE TABLE ${schema}.victims (id int)`,
      `INSERT INTO ${schema}.items VALUES (1), (2)`,
      `CREATE FUNCTION ${schema}.evil() RETURNS int LANGUAGE sql AS 'INSERT INTO ${schema}.victims VALUES (1) RETURNING 1'`,
    );
    my = await mysql.createConnection({ uri: MYSQL_URL });
    await my.query(`DROP TABLE IF EXISTS ${schema}_items, ${schema}_victims`);
    await my.query(`CREATE TABLE ${schema}_items (id int PRIMARY KEY)`);
    await my.query(`CREATE TABLE ${schema}_victims (id int)`);
    await my.query(`INSERT INTO ${schema}_items VALUES (1), (2)`);
    await my.query(`DROP FUNCTION IF EXISTS ${schema}_evil`);
    await my.query(
      `CREATE FUNCTION ${schema}_evil() RETURNS INT MODIFIES SQL DATA BEGIN INSERT INTO ${schema}_victims VALUES (1); RETURN 1; END`,
    );
  });

  afterAll(async () => {
    await pgQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await my?.query(`DROP TABLE IF EXISTS ${schema}_items, ${schema}_victims`);
    await my?.query(`DROP FUNCTION IF EXISTS ${schema}_evil`);
    await my?.end();
  });

  const read = (spec: SourceSpec, extra: Record<string, string> = {}) =>
    createSource(spec, { env: { ...env, ...extra }, baseDir: '/' });

  it('refuses a second statement in the job spec, naming the file and source.query', () => {
    let error: unknown;
    try {
      parseJobSpec(
        jobText(`SELECT id FROM ${schema}.items; DROP TABLE ${schema}.victims`),
        '/jobs/orders.yaml',
      );
    } catch (err) {
      error = err;
    }
    expect(String((error as Error).message)).toMatch(
      /orders\.yaml.*source\.query[\s\S]*one SELECT statement/,
    );
    expect(() =>
      parseJobSpec(jobText(`SELECT id, ';' AS semi FROM ${schema}.items;`), '/jobs/orders.yaml'),
    ).not.toThrow();
  });

  it('postgres: does not run `; DROP TABLE`, even past the job spec check', async () => {
    // Closes the subquery rowbridge wraps it in, so that every statement of the text is valid.
    const query = `SELECT 1 AS id) AS rowbridge_src, (SELECT 1) AS y; DROP TABLE ${schema}.victims; SELECT * FROM (SELECT 1 AS id`;
    const err = await rejection(
      collect(
        read({ type: 'postgres', urlEnv: 'SEC_PG', allowPrivilegedSource: true, cursorColumn: 'id', query }),
      ),
    );
    expect(err.code).toBe('SOURCE_CONFIG');
    expect(await pgQuery(`SELECT to_regclass('${schema}.victims') AS t`)).toEqual([
      { t: `${schema}.victims` },
    ]);
  });

  it('postgres: a function that writes fails in the READ ONLY transaction; a slow query meets the timeout', async () => {
    const write = await rejection(
      collect(
        read({
          type: 'postgres',
          urlEnv: 'SEC_PG',
          allowPrivilegedSource: true,
          cursorColumn: 'id',
          query: `SELECT id, ${schema}.evil() AS x FROM ${schema}.items`,
        }),
      ),
    );
    expect(write.message).toContain('READ ONLY');
    expect(await pgQuery(`SELECT count(*)::int AS n FROM ${schema}.victims`)).toEqual([{ n: 0 }]);
    const slow = await rejection(
      collect(
        read(
          {
            type: 'postgres',
            urlEnv: 'SEC_PG',
            allowPrivilegedSource: true,
            cursorColumn: 'id',
            query: `SELECT id, pg_sleep(5) AS z FROM ${schema}.items`,
          },
          { ROWBRIDGE_SOURCE_STATEMENT_TIMEOUT_MS: '200' },
        ),
      ),
    );
    expect(slow.message).toContain('ROWBRIDGE_SOURCE_STATEMENT_TIMEOUT_MS');
    expect(
      (
        await collect(
          read({
            type: 'postgres',
            urlEnv: 'SEC_PG',
            allowPrivilegedSource: true,
            cursorColumn: 'id',
            query: `SELECT id FROM ${schema}.items`,
          }),
        )
      ).length,
    ).toBe(2);
  });

  it('mysql: does not run `; DROP TABLE`; a write fails in the READ ONLY transaction; a slow query meets the timeout', async () => {
    const err = await rejection(
      collect(
        read({
          type: 'mysql',
          urlEnv: 'SEC_MY',
          allowPrivilegedSource: true,
          cursorColumn: 'id',
          query: `SELECT id FROM ${schema}_items; DROP TABLE ${schema}_victims`,
        }),
      ),
    );
    expect(err.code).toBe('SOURCE_CONFIG');
    const [tables] = await my.query(`SHOW TABLES LIKE '${schema}_victims'`);
    expect(tables).toHaveLength(1);
    const write = await rejection(
      collect(
        read({
          type: 'mysql',
          urlEnv: 'SEC_MY',
          allowPrivilegedSource: true,
          cursorColumn: 'id',
          query: `SELECT id, ${schema}_evil() AS x FROM ${schema}_items`,
        }),
      ),
    );
    expect(write.message).toContain('READ ONLY');
    const [victims] = await my.query(`SELECT COUNT(*) AS n FROM ${schema}_victims`);
    expect(victims).toEqual([{ n: 0 }]);
    const slow = await rejection(
      collect(
        read(
          {
            type: 'mysql',
            urlEnv: 'SEC_MY',
            allowPrivilegedSource: true,
            cursorColumn: 'id',
            query: `SELECT id, SLEEP(3) AS z FROM ${schema}_items`,
          },
          { ROWBRIDGE_SOURCE_STATEMENT_TIMEOUT_MS: '200' },
        ),
      ),
    );
    expect(slow.message).toContain('ROWBRIDGE_SOURCE_STATEMENT_TIMEOUT_MS');
    expect(
      (
        await collect(
          read({
            type: 'mysql',
            urlEnv: 'SEC_MY',
            allowPrivilegedSource: true,
            cursorColumn: 'id',
            query: `SELECT id FROM ${schema}_items`,
          }),
        )
      ).length,
    ).toBe(2);
  });
});
