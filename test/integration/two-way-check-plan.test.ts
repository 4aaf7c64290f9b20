/**
 * `check JOB` and `plan JOB` for two-way jobs (issue 25), from the CLI: check tells a
 * write login that lacks INSERT, UPDATE or DELETE on the table from one that holds them
 * (PostgreSQL and MariaDB) and changes no data; plan shows the matched, source-only,
 * worksheet-only and ambiguous counts and the API cost, and writes nothing anywhere.
 */
import type { ChildProcess } from 'node:child_process';
import mysql from 'mysql2/promise';
import type { Connection } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { pgQuery, PG_URL } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const ID = process.pid;
const SCHEMA = `twcp_${ID}`;
const TABLE = `${SCHEMA}.people`;
const RO = `twcp_ro_${ID}`;
const RW = `twcp_rw_${ID}`;
const MY_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const MY_TABLE = `twcp_people_${ID}`;
const MY_USER = `twcp_${ID}`;

let h: Harness;
let sheet: WorksheetStructure;
let my: Connection;
const children: ChildProcess[] = [];
const cli = (...args: string[]) => spawnCli(h, children, args).exited;
const sheetWrites = () =>
  h.emulator.requests.filter(
    (r) => r.method !== 'GET' && /\/rows(\/|$)/.test(r.path) && !r.path.endsWith('/list'),
  ).length;
const tableWrites = async () =>
  Number((await pgQuery<{ n: string }>(`SELECT n FROM ${SCHEMA}.writes`))[0]!.n);

const pgJob = (name: string, writeEnv: string) => `name: ${name}
source: { type: postgres, urlEnv: TWCP_ROOT, writeUrlEnv: ${writeEnv}, table: ${TABLE}, keyColumn: id, allowPrivilegedSource: true }
target: { worksheet: people, mode: two-way, key: email, conflict: source }
fields: { email: email, name: full_name }
`;

beforeAll(async () => {
  await pgQuery(
    `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`,
    `DROP ROLE IF EXISTS ${RO}`,
    `DROP ROLE IF EXISTS ${RW}`,
    `CREATE SCHEMA ${SCHEMA}`,
    `CREATE TABLE ${TABLE} (id serial PRIMARY KEY, email text, full_name text)`,
    `CREATE TABLE ${SCHEMA}.writes (n bigint NOT NULL)`,
    `INSERT INTO ${SCHEMA}.writes VALUES (0)`,
    `CREATE FUNCTION ${SCHEMA}.count_write() RETURNS trigger AS $$ BEGIN
       UPDATE ${SCHEMA}.writes SET n = n + 1; RETURN NULL; END $$ LANGUAGE plpgsql`,
    `INSERT INTO ${TABLE} (email, full_name) SELECT 'p' || i || '@x.test', 'Person ' || i FROM generate_series(1, 10) i`,
    `CREATE TRIGGER counted AFTER INSERT OR UPDATE OR DELETE ON ${TABLE} FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.count_write()`,
    `CREATE ROLE ${RO} LOGIN`,
    `CREATE ROLE ${RW} LOGIN`,
    `GRANT USAGE ON SCHEMA ${SCHEMA} TO ${RO}, ${RW}`,
    `GRANT SELECT ON ${TABLE} TO ${RO}`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ${TABLE} TO ${RW}`,
    `GRANT USAGE ON SEQUENCE ${SCHEMA}.people_id_seq TO ${RW}`,
  );
  my = await mysql.createConnection({ uri: MY_URL });
  await my.query(`DROP TABLE IF EXISTS ${MY_TABLE}`);
  await my.query(`DROP USER IF EXISTS '${MY_USER}'@'%'`);
  await my.query(`CREATE TABLE ${MY_TABLE} (id int AUTO_INCREMENT PRIMARY KEY, email text, full_name text)`);
  await my.query(`CREATE USER '${MY_USER}'@'%' IDENTIFIED BY 'pw${ID}'`);
  await my.query(`GRANT SELECT ON test.${MY_TABLE} TO '${MY_USER}'@'%'`);

  const as = (role: string) => PG_URL.replace('//root@', `//${role}@`);
  h = await createHarness(
    'two-way-check-plan',
    { requestLogLimit: 1_000_000 },
    {
      TWCP_ROOT: PG_URL,
      TWCP_RO: as(RO),
      TWCP_RW: as(RW),
      TWCP_MY: `mysql://${MY_USER}:pw${ID}@127.0.0.1:3306/test`,
      ROWBRIDGE_SOURCE_ENV_ALLOW: 'TWCP_ROOT,TWCP_RO,TWCP_RW,TWCP_MY',
    },
  );
  sheet = h.emulator.createWorksheet(h.appId, {
    name: 'People',
    alias: 'people',
    fields: [
      { name: 'Email', alias: 'email', type: 'Text' },
      { name: 'Name', alias: 'name', type: 'Text' },
    ],
  });
  // p1..p4 as in the table, w1 and w2 the table lacks, dup twice.
  const rows = [
    ...[1, 2, 3, 4].map((i) => [`p${i}@x.test`, `Person ${i}`]),
    ['w1@x.test', 'W 1'],
    ['w2@x.test', 'W 2'],
    ['dup@x.test', 'Dup A'],
    ['dup@x.test', 'Dup B'],
  ];
  await h.rt.clientFor().rows.batchCreate(sheet.id, {
    rows: rows.map(([email, name]) => ({
      fields: [
        { id: 'email', value: email },
        { id: 'name', value: name },
      ],
    })),
  });
  await h.writeJob('pg-ro', pgJob('pg-ro', 'TWCP_RO'));
  await h.writeJob('pg-rw', pgJob('pg-rw', 'TWCP_RW'));
  await h.writeJob(
    'my',
    `name: my
source: { type: mysql, urlEnv: TWCP_MY, table: ${MY_TABLE}, keyColumn: id }
target: { worksheet: people, mode: two-way, key: email, conflict: source }
fields: { email: email, name: full_name }
`,
  );
}, 60_000);

afterAll(async () => {
  killChildren(children);
  await h?.close();
  await pgQuery(
    `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`,
    `DROP ROLE IF EXISTS ${RO}`,
    `DROP ROLE IF EXISTS ${RW}`,
  );
  await my?.query(`DROP TABLE IF EXISTS ${MY_TABLE}`);
  await my?.query(`DROP USER IF EXISTS '${MY_USER}'@'%'`);
  await my?.end();
});

describe('check and plan of two-way jobs (issue 25)', { timeout: 120_000 }, () => {
  it('check JOB: the write login lacking INSERT, UPDATE, DELETE fails the check; one holding them passes; no data changes', async () => {
    const before = { table: await tableWrites(), sheet: sheetWrites() };
    const ro = await cli('check', 'pg-ro');
    expect(ro.code, ro.stdout + ro.stderr).toBe(1);
    expect(ro.stdout).toMatch(/table write rights.*the login of TWCP_RO lacks INSERT, UPDATE, DELETE/);
    const rw = await cli('check', 'pg-rw', '--json');
    const steps = (JSON.parse(rw.stdout) as { steps: Array<{ name: string; ok: boolean; detail: string }> })
      .steps;
    expect(steps.find((s) => s.name === 'table write rights')).toMatchObject({ ok: true });
    expect(rw.code, rw.stdout).toBe(0);

    const myRo = await cli('check', 'my', '--json');
    const mySteps = (
      JSON.parse(myRo.stdout) as { steps: Array<{ name: string; ok: boolean; detail: string }> }
    ).steps;
    expect(mySteps.find((s) => s.name === 'table write rights')?.detail).toContain(
      'lacks INSERT, UPDATE, DELETE',
    );
    await my.query(`GRANT INSERT, UPDATE, DELETE ON test.${MY_TABLE} TO '${MY_USER}'@'%'`);
    const myRw = await cli('check', 'my');
    expect(myRw.code, myRw.stdout).toBe(0);
    expect(myRw.stdout).toMatch(/table write rights.*INSERT, UPDATE, DELETE on/);

    expect({ table: await tableWrites(), sheet: sheetWrites() }).toEqual(before);
  });

  it('plan JOB: matched, source-only, worksheet-only, ambiguous and the API cost, nothing written', async () => {
    const before = { table: await tableWrites(), sheet: sheetWrites() };
    const plan = await cli('plan', 'pg-rw');
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('plan pg-rw (two-way): read 10 table records, 8 worksheet rows');
    expect(plan.stdout).toMatch(/matched +4 /);
    expect(plan.stdout).toMatch(/source-only +6\n/);
    expect(plan.stdout).toMatch(/worksheet-only +2\n/);
    expect(plan.stdout).toMatch(/ambiguous +1 /);
    expect(plan.stdout).toMatch(/worksheet +create 6, update 0, delete 0/);
    expect(plan.stdout).toMatch(/table +create 2, update 0, delete 0/);
    expect(plan.stdout).toMatch(
      /API calls +3 \(reads 2, batch creates 1, single updates 0, batch deletes 0\)/,
    );
    expect({ table: await tableWrites(), sheet: sheetWrites() }).toEqual(before);
    expect(await h.rt.redis.keys(`${h.rt.statePrefix}:twoway:*`)).toEqual([]);
  });
});
