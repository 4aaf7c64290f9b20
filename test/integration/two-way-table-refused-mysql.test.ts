/**
 * Two-way with a MariaDB/MySQL table that refuses some of the worksheet's records (issue
 * 25), as two-way-table-refused.test.ts is for PostgreSQL: a duplicate of a UNIQUE column
 * (ER_DUP_ENTRY), a value too long for varchar(20) (ER_DATA_TOO_LONG), a CHECK violation
 * and a delete a foreign key holds (ER_ROW_IS_REFERENCED_2). Each is a dead letter with
 * the errno as its code; the good records land once (writes counted by triggers); the
 * next run commits nothing; fixed by a person, they sync and the dead letters clear.
 */
import mysql from 'mysql2/promise';
import type { Connection } from 'mysql2/promise';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { refusedTableScenario, SEEDED } from '../helpers/two-way-table-refused.ts';

const ROOT_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const TABLE = `twr_contacts_${process.pid}`;
const ORDERS = `twr_orders_${process.pid}`;
const WRITES = `twr_writes_${process.pid}`;

let h: Harness;
let sheet: WorksheetStructure;
let admin: Connection;
let mariadb = true;

const query = async <T>(sql: string, params: unknown[] = []) => (await admin.query(sql, params))[0] as T;

beforeAll(async () => {
  admin = await mysql.createConnection({ uri: ROOT_URL });
  mariadb = /mariadb/i.test((await query<Array<{ v: string }>>('SELECT VERSION() AS v'))[0]!.v);
  await admin.query(`DROP TABLE IF EXISTS ${ORDERS}, ${TABLE}, ${WRITES}`);
  await admin.query(`CREATE TABLE ${TABLE} (id int AUTO_INCREMENT PRIMARY KEY, email varchar(100),
    full_name varchar(20), handle varchar(50) UNIQUE, score int CHECK (score >= 0),
    updated_at datetime(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3)) ENGINE=InnoDB`);
  await admin.query(`CREATE TABLE ${ORDERS} (id int AUTO_INCREMENT PRIMARY KEY, contact_id int,
    FOREIGN KEY (contact_id) REFERENCES ${TABLE} (id)) ENGINE=InnoDB`);
  await admin.query(`CREATE TABLE ${WRITES} (n int NOT NULL)`);
  await admin.query(`INSERT INTO ${WRITES} VALUES (0)`);
  for (const event of ['INSERT', 'UPDATE', 'DELETE'])
    await admin.query(
      `CREATE TRIGGER ${TABLE}_${event.toLowerCase()} AFTER ${event} ON ${TABLE} FOR EACH ROW UPDATE ${WRITES} SET n = n + 1`,
    );
  const values = Array.from({ length: SEEDED }, (_, i) => [
    `t${i}@x.test`,
    `Person ${i}`,
    `h${i}`,
    i,
    '2024-01-01 00:00:00',
  ]);
  await admin.query(`INSERT INTO ${TABLE} (email, full_name, handle, score, updated_at) VALUES ?`, [values]);
  await admin.query(`UPDATE ${WRITES} SET n = 0`);
  h = await createHarness(
    'two-way-table-refused-mysql',
    { requestLogLimit: 1_000_000 },
    { TWRM_DB: ROOT_URL },
  );
  sheet = h.emulator.createWorksheet(h.appId, {
    name: 'Contacts',
    alias: 'contacts',
    fields: [
      { name: 'Email', alias: 'email', type: 'Text' },
      { name: 'Name', alias: 'name', type: 'Text' },
      { name: 'Handle', alias: 'handle', type: 'Text' },
      { name: 'Score', alias: 'score', type: 'Number' },
    ],
  });
  await h.writeJob(
    'contacts-my',
    `name: contacts-my
source: { type: mysql, urlEnv: TWRM_DB, table: ${TABLE}, keyColumn: id, updatedAtColumn: updated_at, allowPrivilegedSource: true }
target: { worksheet: contacts, mode: two-way, key: email }
fields: { email: email, name: full_name, handle: handle, score: score }
`,
  );
}, 60_000);

afterAll(async () => {
  await h?.close();
  await admin?.query(`DROP TABLE IF EXISTS ${ORDERS}, ${TABLE}, ${WRITES}`);
  await admin?.end();
});

describe('two-way: records a mysql table refuses (issue 25)', () => {
  it('are dead letters with their errno; the others land once; the next run commits nothing; fixed, they sync', async () => {
    await refusedTableScenario({
      h,
      sheet,
      job: 'contacts-my',
      table: TABLE,
      orders: ORDERS,
      exec: async (sql) => void (await admin.query(sql)),
      tableWrites: async () => (await query<Array<{ n: number }>>(`SELECT n FROM ${WRITES}`))[0]!.n,
      contents: async () =>
        new Map(
          (
            await query<Array<{ email: string; v: string }>>(
              `SELECT email, CONCAT_WS('|', full_name, handle, score) AS v FROM ${TABLE}`,
            )
          ).map((r) => [r.email, r.v]),
        ),
      expect: {
        unique: { code: /MySQL error 1062 ER_DUP_ENTRY, SQLSTATE 23000/, errorCode: 1062 },
        tooLong: { code: /MySQL error 1406 ER_DATA_TOO_LONG, SQLSTATE 22001/, errorCode: 1406 },
        check: mariadb
          ? {
              code: /allowed: values satisfying CHECK \(`?score`? >= 0\) \(MySQL error 4025\b/,
              errorCode: 4025,
            }
          : {
              code: /allowed: values satisfying CHECK \(\(`?score`? >= 0\)\) \(MySQL error 3819\b/,
              errorCode: 3819,
            },
        foreignKey: { code: /MySQL error 1451 ER_ROW_IS_REFERENCED_2, SQLSTATE 23000/, errorCode: 1451 },
      },
    });
  }, 180_000);
});
