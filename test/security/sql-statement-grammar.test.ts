/**
 * Attack: a second statement hidden from the single-statement check by the servers' own
 * grammar (issue 22, item 11). Each text below is two statements to the server (checked
 * with psql and with mysql2's multi-statement mode): Postgres takes `a$b$` for a name,
 * not a dollar quote, and `name'\'` for a standard string, not an E'' one; MySQL takes
 * `1--1` for arithmetic, not a comment, and runs the body of `/*! ... *\/`. The job spec
 * check and the source refuse every one before the query reaches a server, and the
 * victim table survives.
 */
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJobSpec } from '../../src/sync/job-spec/load-job-spec.ts';
import { createSource } from '../../src/sync/sources/create-source.ts';
import { collect, rejection } from '../fixtures/sources/source-test-kit.ts';
import { PG_URL, pgQuery } from '../helpers/pg.ts';

const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const victims = `rb_sec_gram_${process.pid}`;
const env = { GRAM_PG: PG_URL, GRAM_MY: MYSQL_URL };

const jobText = (type: string, urlEnv: string, query: string) => `name: orders
source: { type: ${type}, urlEnv: ${urlEnv}, cursorColumn: id, allowPrivilegedSource: true, query: ${JSON.stringify(query)} }
target: { worksheet: orders, mode: append }
fields:
  id: Id
`;

const attacks = [
  ['postgres', `SELECT 1 AS a$b$; DROP TABLE ${victims}; SELECT $b$x$b$`],
  ['postgres', `SELECT 1 AS id, name'\\' AS n; DROP TABLE ${victims}; SELECT '\\'`],
  ['mysql', `SELECT 1--1 AS id; DROP TABLE ${victims}`],
  ['mysql', `SELECT 1 AS id /*! ; DROP TABLE ${victims} */`],
  ['mysql', `SELECT 1 AS id /*M!100000 ; DROP TABLE ${victims} */`],
] as const;

describe('the single-statement check reads SQL as the servers do', () => {
  let my: mysql.Connection;

  beforeAll(async () => {
    await pgQuery(`DROP TABLE IF EXISTS ${victims}`, `CREATE TABLE ${victims} (id int)`);
    my = await mysql.createConnection({ uri: MYSQL_URL });
    await my.query(`DROP TABLE IF EXISTS ${victims}`);
    await my.query(`CREATE TABLE ${victims} (id int)`);
  });

  afterAll(async () => {
    await pgQuery(`DROP TABLE IF EXISTS ${victims}`);
    await my?.query(`DROP TABLE IF EXISTS ${victims}`);
    await my?.end();
  });

  it.each(attacks)('%s: refuses %s in the job spec and at the source', async (type, query) => {
    expect(() => parseJobSpec(jobText(type, 'X', query), '/jobs/orders.yaml')).toThrow(
      /orders\.yaml[\s\S]*source\.query[\s\S]*one SELECT statement/,
    );
    const urlEnv = type === 'postgres' ? 'GRAM_PG' : 'GRAM_MY';
    const err = await rejection(
      collect(
        createSource(
          { type, urlEnv, cursorColumn: 'id', query, allowPrivilegedSource: true },
          { env, baseDir: '/' },
        ),
      ),
    );
    // The source's own refusal, not the server's parse error.
    expect(err.message).toContain('source.query must be one SELECT statement');
    if (type === 'postgres')
      expect(await pgQuery(`SELECT to_regclass('${victims}') AS t`)).toEqual([{ t: victims }]);
    else expect((await my.query(`SHOW TABLES LIKE '${victims}'`))[0]).toHaveLength(1);
  });

  it('still reads what is one statement: $ inside names, 1 - -1, comments, a trailing ;', async () => {
    const pgRows = await collect(
      createSource(
        {
          type: 'postgres',
          urlEnv: 'GRAM_PG',
          cursorColumn: 'id',
          allowPrivilegedSource: true,
          query: `SELECT 1 AS id, 2 AS a$b, $q$;$q$ AS semi, E'\\';' AS e /* a /* nested ; */ comment */; -- done`,
        },
        { env, baseDir: '/' },
      ),
    );
    expect(pgRows.map((row) => row.data)).toEqual([{ id: 1, a$b: 2, semi: ';', e: "';" }]);
    const myRows = await collect(
      createSource(
        {
          type: 'mysql',
          urlEnv: 'GRAM_MY',
          cursorColumn: 'id',
          allowPrivilegedSource: true,
          query: `SELECT 1--1 AS id, 'a\\';' AS s /*! , 3 AS x */ -- trailing comment`,
        },
        { env, baseDir: '/' },
      ),
    );
    expect(myRows.map((row) => row.data)).toEqual([{ id: 2, s: "a';", x: 3 }]);
  });
});
