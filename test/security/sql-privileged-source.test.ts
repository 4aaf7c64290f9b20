/**
 * Attack: a job's "read-only" source query used what its database login may do beyond
 * reading (issue 22, item 3). A READ ONLY transaction is no sandbox: as a Postgres
 * superuser, dblink inserted rows and ran an OS command (`COPY … TO PROGRAM`) and
 * `pg_read_file` read a server file; pg_signal_backend ended another session; on MariaDB
 * FILE read a file with LOAD_FILE, and `) … INTO OUTFILE … #` broke out of the subquery
 * wrapper and wrote one. Such logins are now refused at connect, naming the reason and
 * `allowPrivilegedSource: true`; a SELECT-only login reads as before; and a query cannot
 * leave the wrapper even when the override is set.
 */
import { existsSync, rmSync } from 'node:fs';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSource } from '../../src/sync/sources/create-source.ts';
import type { PostgresSourceSpec, SourceSpec } from '../../src/sync/sources/source-spec.ts';
import { collect, rejection } from '../fixtures/sources/source-test-kit.ts';
import { PG_URL, pgQuery } from '../helpers/pg.ts';

const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const tag = `rb_sec_priv_${process.pid}`;
const pgAs = (role: string) => {
  const url = new URL(PG_URL);
  url.username = role;
  return url.href;
};
const myAs = (user: string) => {
  const url = new URL(MYSQL_URL);
  url.username = user;
  url.password = '';
  return url.href;
};
const role = (name: string) => `${tag}_${name}`;
const outFile = `/tmp/${tag}_out.txt`;
const programFile = `/tmp/${tag}_program`;

const read = (spec: SourceSpec, url: string) =>
  collect(createSource(spec, { env: { PRIV_DB: url }, baseDir: '/' }));

describe('postgres: a privileged role is refused', () => {
  const roles = ['reader', 'files', 'program', 'signal', 'victim'].map(role);

  beforeAll(async () => {
    await pgQuery(
      `DROP SCHEMA IF EXISTS ${tag} CASCADE`,
      ...roles.map((name) => `DROP ROLE IF EXISTS ${name}`),
      `CREATE SCHEMA ${tag}`,
      `CREATE TABLE ${tag}.items (id int PRIMARY KEY)`,
      `INSERT INTO ${tag}.items VALUES (1), (2)`,
      `CREATE TABLE ${tag}.victims (id int)`,
      `CREATE EXTENSION dblink SCHEMA ${tag}`,
      ...roles.map((name) => `CREATE ROLE ${name} LOGIN`),
      `GRANT USAGE ON SCHEMA ${tag} TO ${roles.join(', ')}`,
      `GRANT SELECT ON ${tag}.items TO ${roles.join(', ')}`,
      `GRANT pg_read_server_files TO ${role('files')}`,
      `GRANT pg_execute_server_program TO ${role('program')}`,
      `GRANT pg_signal_backend TO ${role('signal')}`,
    );
  });

  afterAll(async () => {
    rmSync(programFile, { force: true });
    await pgQuery(
      `DROP SCHEMA IF EXISTS ${tag} CASCADE`,
      ...roles.map((name) => `DROP ROLE IF EXISTS ${name}`),
    );
  });

  const query = (select: string): PostgresSourceSpec => ({
    type: 'postgres',
    urlEnv: 'PRIV_DB',
    cursorColumn: 'id',
    query: select,
  });

  it('a superuser URL: dblink writes and runs a program, pg_read_file reads; all refused', async () => {
    const dblink = `${tag}.dblink_exec('${PG_URL.replace(/'/g, "''")}', $$INSERT INTO ${tag}.victims VALUES (1)$$)`;
    const program = `${tag}.dblink_exec('${PG_URL}', $$COPY (SELECT 1) TO PROGRAM 'touch ${programFile}'$$)`;
    for (const select of [
      `SELECT 1 AS id, ${dblink} AS x`,
      `SELECT 1 AS id, ${program} AS x`,
      `SELECT 1 AS id, pg_read_file('PG_VERSION') AS leak`,
    ]) {
      const err = await rejection(read(query(select), PG_URL));
      expect(err.code, select).toBe('SOURCE_CONFIG');
      expect(err.message).toMatch(/refused: role \w+ is a superuser/);
      expect(err.message).toContain('allowPrivilegedSource: true');
    }
    expect(await pgQuery(`SELECT count(*)::int AS n FROM ${tag}.victims`)).toEqual([{ n: 0 }]);
    expect(existsSync(programFile)).toBe(false);
  });

  it('members of pg_read_server_files, pg_execute_server_program, pg_signal_backend: refused', async () => {
    const files = await rejection(
      read(query(`SELECT 1 AS id, pg_read_file('PG_VERSION') AS leak`), pgAs(role('files'))),
    );
    expect(files.message).toContain(`role ${role('files')} is a member of pg_read_server_files`);
    const program = await rejection(read({ ...query(`SELECT 1 AS id`) }, pgAs(role('program'))));
    expect(program.message).toContain('is a member of pg_execute_server_program');

    const victim = new pg.Client({ connectionString: pgAs(role('victim')) });
    victim.on('error', () => undefined);
    await victim.connect();
    try {
      const pid = (await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      const signal = await rejection(
        read(query(`SELECT pg_terminate_backend(${pid}) AS id`), pgAs(role('signal'))),
      );
      expect(signal.message).toContain('is a member of pg_signal_backend');
      expect((await victim.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await victim.end().catch(() => undefined);
    }
  });

  it('a SELECT-only role reads; a superuser reads with allowPrivilegedSource: true', async () => {
    const select = query(`SELECT id FROM ${tag}.items`);
    expect(await read(select, pgAs(role('reader')))).toHaveLength(2);
    expect(await read({ ...select, allowPrivilegedSource: true }, PG_URL)).toHaveLength(2);
  });
});

describe('mysql: an account with FILE or write grants is refused', () => {
  let my: mysql.Connection;
  const users = ['reader', 'files', 'writer', 'roled'].map(role);
  const fileRole = role('file_role');
  const items = `${tag}_items`;

  beforeAll(async () => {
    my = await mysql.createConnection({ uri: MYSQL_URL });
    await cleanMysql();
    await my.query(`CREATE TABLE ${items} (id int PRIMARY KEY)`);
    await my.query(`INSERT INTO ${items} VALUES (1), (2)`);
    for (const user of users) {
      await my.query(`CREATE USER '${user}'@'%'`);
      await my.query(`GRANT SELECT ON test.${items} TO '${user}'@'%'`);
    }
    await my.query(`GRANT FILE ON *.* TO '${role('files')}'@'%'`);
    await my.query(`GRANT INSERT, UPDATE ON test.${items} TO '${role('writer')}'@'%'`);
    await my.query(`CREATE ROLE ${fileRole}`);
    await my.query(`GRANT FILE ON *.* TO ${fileRole}`);
    await my.query(`GRANT ${fileRole} TO '${role('roled')}'@'%'`);
  });

  async function cleanMysql(): Promise<void> {
    rmSync(outFile, { force: true });
    await my.query(`DROP TABLE IF EXISTS ${items}`);
    for (const user of users) await my.query(`DROP USER IF EXISTS '${user}'@'%'`);
    await my.query(`DROP ROLE IF EXISTS ${fileRole}`);
  }

  afterAll(async () => {
    if (my !== undefined) await cleanMysql();
    await my?.end();
  });

  const query = (select: string, extra: Partial<SourceSpec> = {}): SourceSpec =>
    ({ type: 'mysql', urlEnv: 'PRIV_DB', cursorColumn: 'id', query: select, ...extra }) as SourceSpec;

  it('FILE: LOAD_FILE and a wrapper escape into INTO OUTFILE are refused; root too', async () => {
    for (const url of [myAs(role('files')), MYSQL_URL]) {
      for (const select of [
        `SELECT 1 AS id, LOAD_FILE('/etc/hostname') AS leak`,
        `SELECT 1 AS id) AS rowbridge_src INTO OUTFILE '${outFile}' #`,
      ]) {
        const err = await rejection(read(query(select), url));
        expect(err.code, select).toBe('SOURCE_CONFIG');
        expect(err.message).toMatch(/refused: account \S+ holds [A-Z ,]*(FILE|ALL PRIVILEGES)/);
        expect(err.message).toContain('allowPrivilegedSource: true');
      }
    }
    expect(existsSync(outFile)).toBe(false);
  });

  it('write grants, and a role whose grants cannot be read, are refused', async () => {
    const writer = await rejection(read(query(`SELECT id FROM ${items}`), myAs(role('writer'))));
    expect(writer.message).toMatch(/holds INSERT, UPDATE/);
    // MariaDB shows a role's grants to its holder only while it is enabled: unknown, refused.
    const roled = await rejection(read(query(`SELECT id FROM ${items}`), myAs(role('roled'))));
    expect(roled.message).toContain(`the grants of its role \`${fileRole}\` cannot be read`);
  });

  it('with allowPrivilegedSource, a query still cannot leave the subquery to write a file', async () => {
    for (const select of [
      `SELECT 1 AS id) AS rowbridge_src INTO OUTFILE '${outFile}' #`,
      `SELECT 1 AS id) AS rowbridge_src INTO OUTFILE '${outFile}' -- `,
      // MariaDB runs a query whose last /* comment is never closed.
      `SELECT 1 AS id) AS rowbridge_src INTO OUTFILE '${outFile}' /*`,
    ]) {
      const err = await rejection(read(query(select, { allowPrivilegedSource: true }), MYSQL_URL));
      expect(err.code, select).toBe('SOURCE_CONFIG');
    }
    expect(existsSync(outFile)).toBe(false);
  });

  it('a SELECT-only account reads; root reads with allowPrivilegedSource: true', async () => {
    expect(await read(query(`SELECT id FROM ${items}`), myAs(role('reader')))).toHaveLength(2);
    expect(
      await read(query(`SELECT id FROM ${items}`, { allowPrivilegedSource: true }), MYSQL_URL),
    ).toHaveLength(2);
  });
});
