/**
 * Two-way sync with a MariaDB/MySQL table (issue 25): the first run, then runs with no
 * edit that write nothing on either side (the table's writes counted by triggers, the
 * worksheet's by the emulator's request log). The job connects as a least-privilege
 * account (SELECT, INSERT, UPDATE, DELETE on the one table); root is refused without
 * allowPrivilegedSource.
 */
import mysql from 'mysql2/promise';
import type { Connection } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const ROOT_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const TABLE = `tw_people_${process.pid}`;
const WRITES = `tw_writes_${process.pid}`;
const USER = `tw_${process.pid}`;
const PASSWORD = `pw${process.pid}x`;

let h: Harness;
let sheet: WorksheetStructure;
let admin: Connection;
/** Worksheet writes made by the test's own setup. */
let seeded = 0;

const query = async <T>(sql: string, params: unknown[] = []) => (await admin.query(sql, params))[0] as T;
const tableWrites = async () => (await query<Array<{ n: number }>>(`SELECT n FROM ${WRITES}`))[0]!.n;
const sheetWrites = () =>
  h.emulator.requests.filter(
    (r) => r.method !== 'GET' && /\/rows(\/|$)/.test(r.path) && !r.path.endsWith('/list'),
  ).length;
const job = (name: string, urlEnv: string, extra = '') => `name: ${name}
source: { type: mysql, urlEnv: ${urlEnv}, table: ${TABLE}, keyColumn: id, updatedAtColumn: updated_at${extra} }
target: { worksheet: people, mode: two-way, key: email }
fields: { email: email, name: full_name, credit: credit, joined: joined }
`;

beforeAll(async () => {
  admin = await mysql.createConnection({ uri: ROOT_URL });
  await admin.query(`DROP TABLE IF EXISTS ${TABLE}, ${WRITES}`);
  await admin.query(`DROP USER IF EXISTS '${USER}'@'%'`);
  await admin.query(`CREATE TABLE ${TABLE} (id int AUTO_INCREMENT PRIMARY KEY, email varchar(100), full_name text,
    credit decimal(12,2), joined date, updated_at datetime NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP)`);
  await admin.query(`CREATE TABLE ${WRITES} (n int NOT NULL)`);
  await admin.query(`INSERT INTO ${WRITES} VALUES (0)`);
  for (const event of ['INSERT', 'UPDATE', 'DELETE'])
    await admin.query(
      `CREATE TRIGGER ${TABLE}_${event.toLowerCase()} AFTER ${event} ON ${TABLE} FOR EACH ROW UPDATE ${WRITES} SET n = n + 1`,
    );
  const values = Array.from({ length: 50 }, (_, i) => [
    `p${i}@x.test`,
    `Person ${i}`,
    i * 10,
    `2024-02-${String((i % 28) + 1).padStart(2, '0')}`,
    '2024-01-01 00:00:00',
  ]);
  await admin.query(`INSERT INTO ${TABLE} (email, full_name, credit, joined, updated_at) VALUES ?`, [values]);
  await admin.query(`UPDATE ${WRITES} SET n = 0`);
  await admin.query(`CREATE USER '${USER}'@'%' IDENTIFIED BY '${PASSWORD}'`);
  await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON test.${TABLE} TO '${USER}'@'%'`);

  const userUrl = `mysql://${USER}:${PASSWORD}@127.0.0.1:3306/test`;
  h = await createHarness(
    'two-way-mysql',
    { requestLogLimit: 1_000_000 },
    { TWM_DB: userUrl, TWM_ROOT: ROOT_URL },
  );
  sheet = h.emulator.createWorksheet(h.appId, {
    name: 'People',
    alias: 'people',
    fields: [
      { name: 'Email', alias: 'email', type: 'Text' },
      { name: 'Name', alias: 'name', type: 'Text' },
      { name: 'Credit', alias: 'credit', type: 'Number' },
      { name: 'Joined', alias: 'joined', type: 'Date' },
    ],
  });
  // 20 of the table's records, every 5th named otherwise, and 10 the table lacks.
  const rows = [
    ...Array.from({ length: 20 }, (_, i) => [
      `p${i}@x.test`,
      i % 5 === 0 ? `Sheet ${i}` : `Person ${i}`,
      i * 10,
      `2024-02-${String((i % 28) + 1).padStart(2, '0')}`,
    ]),
    ...Array.from({ length: 10 }, (_, i) => [`w${i}@x.test`, `Sheet only ${i}`, 1000 + i, '2025-03-01']),
  ] as const;
  await h.rt.clientFor().rows.batchCreate(sheet.id, {
    rows: rows.map(([email, name, credit, joined]) => ({
      fields: [
        { id: 'email', value: email },
        { id: 'name', value: name },
        { id: 'credit', value: credit },
        { id: 'joined', value: joined },
      ],
    })),
  });
  seeded = sheetWrites();
  await h.writeJob('people', job('people', 'TWM_DB'));
  await h.writeJob('people-root', job('people-root', 'TWM_ROOT'));
}, 60_000);

afterAll(async () => {
  await h?.close();
  await admin?.query(`DROP TABLE IF EXISTS ${TABLE}, ${WRITES}`);
  await admin?.query(`DROP USER IF EXISTS '${USER}'@'%'`);
  await admin?.end();
});

describe('two-way sync with a mysql table (issue 25)', { timeout: 120_000 }, () => {
  it('root without allowPrivilegedSource is refused, naming what it holds', async () => {
    const { record } = await h.runJob('people-root');
    expect(record.status).toBe('failed');
    expect(record.message).toMatch(/refused: account root@.* holds .*allowPrivilegedSource: true/s);
    expect(await tableWrites()).toBe(0);
    expect(sheetWrites()).toBe(seeded);
  });

  it('first run: every record once on both sides, matched ones merged; runs with no edit write nothing', async () => {
    const { record } = await h.runJob('people');
    expect(record.status, record.message).toBe('completed');
    const table = await query<
      Array<{ id: number; email: string; full_name: string; credit: string; joined: string }>
    >(
      `SELECT id, email, full_name, CAST(credit AS CHAR) AS credit, CAST(joined AS CHAR) AS joined FROM ${TABLE} ORDER BY id`,
    );
    const sheetRows = h.emulator.state.rows(sheet.id);
    expect(table).toHaveLength(60);
    expect(sheetRows).toHaveLength(60);
    expect(new Set(table.map((r) => r.email)).size).toBe(60);
    expect(new Set(sheetRows.map((r) => r.text.email)).size).toBe(60);
    const byEmail = new Map(table.map((r) => [r.email, r]));
    // Matched, named otherwise: the worksheet changed it after updated_at (newest).
    expect(byEmail.get('p5@x.test')?.full_name).toBe('Sheet 5');
    expect(byEmail.get('w3@x.test')).toMatchObject({
      full_name: 'Sheet only 3',
      credit: '1003.00',
      joined: '2025-03-01',
    });
    expect(byEmail.get('p7@x.test')?.joined).toBe('2024-02-08');
    const rowOf = new Map(sheetRows.map((r) => [r.text.email, r.text]));
    expect(rowOf.get('p40@x.test')).toMatchObject({ name: 'Person 40', credit: '400', joined: '2024-02-13' });

    const before = { table: await tableWrites(), sheet: sheetWrites() };
    for (let i = 0; i < 3; i++) {
      const again = await h.runJob('people');
      expect(again.record.status, again.record.message).toBe('completed');
    }
    expect({ table: await tableWrites(), sheet: sheetWrites() }).toEqual(before);
  });
});
