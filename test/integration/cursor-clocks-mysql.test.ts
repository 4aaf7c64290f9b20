/**
 * The table's cursor of a two-way run on MariaDB/MySQL is capped on the database's clock
 * (`NOW(6)`) or, when earlier, the start of the oldest InnoDB transaction that has modified
 * rows (`information_schema.INNODB_TRX`, seen here: the login holds PROCESS, the job says
 * `allowPrivilegedSource`). A transaction updates a record (`ON UPDATE CURRENT_TIMESTAMP`:
 * the statement's time), stays open past the cursor margin while another edit commits and
 * a run reads, and commits after it: the next run syncs it. (cursor-clocks.test.ts has the
 * PostgreSQL and the platform's cases.)
 */
import mysql from 'mysql2/promise';
import type { Connection } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAST_MARGIN_MS, SHORT_MARGIN } from '../helpers/cursor-margin.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const ROOT_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const TABLE = `curclk_people_${process.pid}`;

let h: Harness;
let sheet: string;
let admin: Connection;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nameOf = (email: string) =>
  h.emulator.state.rows(sheet).find((r) => r.values.email === email)?.values.name;
const idOf = async (email: string) =>
  ((await admin.query(`SELECT id FROM ${TABLE} WHERE email = ?`, [email]))[0] as Array<{ id: number }>)[0]!
    .id;
async function run() {
  const { record } = await h.runJob('people');
  expect(record.status, record.message).toBe('completed');
}

beforeAll(async () => {
  admin = await mysql.createConnection({ uri: ROOT_URL });
  await admin.query(`DROP TABLE IF EXISTS ${TABLE}`);
  await admin.query(`CREATE TABLE ${TABLE} (id int AUTO_INCREMENT PRIMARY KEY, email varchar(100), full_name text,
    updated_at datetime NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP)`);
  await admin.query(
    `INSERT INTO ${TABLE} (email, full_name) VALUES ('a@x.test', 'A'), ('y@x.test', 'Y'), ('z@x.test', 'Z')`,
  );
  h = await createHarness('cursor-clocks-mysql', {}, { CURCLKM_DB: ROOT_URL, ...SHORT_MARGIN });
  sheet = h.createWorksheet({
    name: 'People',
    alias: 'people',
    fields: [
      { name: 'Email', alias: 'email', type: 'Text' },
      { name: 'Name', alias: 'name', type: 'Text' },
    ],
  });
  await h.writeJob(
    'people',
    `name: people
source: { type: mysql, urlEnv: CURCLKM_DB, table: ${TABLE}, keyColumn: id, updatedAtColumn: updated_at, allowPrivilegedSource: true }
target: { worksheet: people, mode: two-way, key: email }
fields: { email: email, name: full_name }
`,
  );
}, 60_000);

afterAll(async () => {
  await h?.close();
  await admin?.query(`DROP TABLE IF EXISTS ${TABLE}`);
  await admin?.end();
});

describe(
  'two-way on MySQL: the table cursor is capped on the database and its open transactions',
  { timeout: 120_000 },
  () => {
    it('a transaction open across a run, its record stamped before the reads, is synced by the next run', async () => {
      await run();
      await sleep(PAST_MARGIN_MS);
      await run();
      const tx = await mysql.createConnection({ uri: ROOT_URL });
      try {
        await tx.query('START TRANSACTION');
        // By key: a condition on the unindexed email would lock every row it scans.
        await tx.query(`UPDATE ${TABLE} SET full_name = 'Y in tx' WHERE id = ?`, [await idOf('y@x.test')]);
        await sleep(PAST_MARGIN_MS + 1_000);
        await admin.query(`UPDATE ${TABLE} SET full_name = 'Z later' WHERE id = ?`, [await idOf('z@x.test')]);
        await run();
        expect(nameOf('z@x.test')).toBe('Z later');
        expect(nameOf('y@x.test')).toBe('Y');
        await tx.query('COMMIT');
      } finally {
        await tx.end();
      }
      await run();
      expect(nameOf('y@x.test')).toBe('Y in tx');
    });
  },
);
