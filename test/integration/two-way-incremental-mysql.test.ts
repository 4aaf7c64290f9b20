/**
 * Two-way runs read what changed since the last run (issue 25) with a MariaDB/MySQL table
 * whose `updatedAtColumn` is a DATETIME (a wall clock to the second, moved by
 * `ON UPDATE CURRENT_TIMESTAMP`): a settled run reads no record whole; after edits and
 * deletes on both sides the run reads the edited records and their other side only, and
 * finds both deletes. Table writes are counted by triggers, worksheet writes by the
 * emulator's request log.
 */
import mysql from 'mysql2/promise';
import type { Connection } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { twoWayReportKey } from '../../src/queue/two-way-job.ts';
import type { TwoWayReport } from '../../src/sync/two-way/two-way-run.ts';
import { PAST_MARGIN_MS, SHORT_MARGIN } from '../helpers/cursor-margin.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const ROOT_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const TABLE = `twinc_people_${process.pid}`;
const WRITES = `twinc_writes_${process.pid}`;

let h: Harness;
let sheet: WorksheetStructure;
let client: PlatformClient;
let admin: Connection;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const query = async <T>(sql: string, params: unknown[] = []) => (await admin.query(sql, params))[0] as T;
const tableWrites = async () => (await query<Array<{ n: number }>>(`SELECT n FROM ${WRITES}`))[0]!.n;
const sheetWrites = () =>
  h.emulator.requests.filter(
    (r) => r.method !== 'GET' && /\/rows(\/|$)/.test(r.path) && !r.path.endsWith('/list'),
  ).length;
const rowsByEmail = () => new Map(h.emulator.state.rows(sheet.id).map((r) => [r.text.email ?? '', r]));
const tableByEmail = async () =>
  new Map(
    (await query<Array<{ email: string; full_name: string }>>(`SELECT email, full_name FROM ${TABLE}`)).map(
      (r) => [r.email, r],
    ),
  );

async function run() {
  const before = { requests: h.emulator.requests.length, table: await tableWrites(), sheet: sheetWrites() };
  const { record } = await h.runJob('people');
  expect(record.status, record.message).toBe('completed');
  const report = JSON.parse(
    (await h.rt.redis.get(twoWayReportKey(h.rt.statePrefix, record.runId)))!,
  ) as TwoWayReport;
  const lists = h.emulator.requests
    .slice(before.requests)
    .filter((r) => r.path.endsWith('/rows/list')).length;
  return {
    report,
    lists,
    writes: { table: (await tableWrites()) - before.table, sheet: sheetWrites() - before.sheet },
  };
}

beforeAll(async () => {
  admin = await mysql.createConnection({ uri: ROOT_URL });
  await admin.query(`DROP TABLE IF EXISTS ${TABLE}, ${WRITES}`);
  await admin.query(`CREATE TABLE ${TABLE} (id int AUTO_INCREMENT PRIMARY KEY, email varchar(100), full_name text,
    updated_at datetime NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP)`);
  await admin.query(`CREATE TABLE ${WRITES} (n int NOT NULL)`);
  await admin.query(`INSERT INTO ${WRITES} VALUES (0)`);
  for (const event of ['INSERT', 'UPDATE', 'DELETE'])
    await admin.query(
      `CREATE TRIGGER ${TABLE}_${event.toLowerCase()} AFTER ${event} ON ${TABLE} FOR EACH ROW UPDATE ${WRITES} SET n = n + 1`,
    );
  const values = Array.from({ length: 30 }, (_, i) => [`p${i}@x.test`, `Person ${i}`]);
  await admin.query(`INSERT INTO ${TABLE} (email, full_name) VALUES ?`, [values]);
  h = await createHarness(
    'two-way-incremental-mysql',
    { requestLogLimit: 1_000_000 },
    { TWIM_DB: ROOT_URL, ...SHORT_MARGIN },
  );
  client = h.rt.clientFor();
  sheet = h.emulator.createWorksheet(h.appId, {
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
source: { type: mysql, urlEnv: TWIM_DB, table: ${TABLE}, keyColumn: id, updatedAtColumn: updated_at, allowPrivilegedSource: true }
target: { worksheet: people, mode: two-way, key: email }
fields: { email: email, name: full_name }
`,
  );
}, 60_000);

afterAll(async () => {
  await h?.close();
  await admin?.query(`DROP TABLE IF EXISTS ${TABLE}, ${WRITES}`);
  await admin?.end();
});

describe(
  'two-way runs of a mysql table read what changed since the last run (issue 25)',
  { timeout: 240_000 },
  () => {
    it('settled, no record is read whole; after edits and deletes on both sides, those records only, deletes found', async () => {
      expect((await run()).report.reads).toBe('whole');
      await sleep(PAST_MARGIN_MS);
      expect((await run()).writes).toEqual({ table: 0, sheet: 0 });
      await sleep(PAST_MARGIN_MS);
      const quiet = await run();
      expect(quiet.report.readWhole).toEqual({ source: 0, worksheet: 0 });
      expect(quiet.report.counts.linked).toBe(30);
      expect(quiet.lists).toBe(2);
      expect(quiet.writes).toEqual({ table: 0, sheet: 0 });

      await query(
        `UPDATE ${TABLE} SET full_name = CONCAT('table edit ', id) WHERE email IN ('p1@x.test', 'p2@x.test')`,
      );
      await query(`DELETE FROM ${TABLE} WHERE email = 'p3@x.test'`);
      const rows = rowsByEmail();
      await client.rows.update(sheet.id, rows.get('p4@x.test')!.id, {
        fields: [{ id: 'name', value: 'sheet edit 4' }],
      });
      await client.rows.batchDelete(sheet.id, { rowIds: [rows.get('p5@x.test')!.id] });

      const edited = await run();
      // Table: 2 changed, the other side of the worksheet's edit and delete; worksheet:
      // 1 changed, the other side of the table's 2 edits and its delete.
      expect(edited.report.readWhole).toEqual({ source: 4, worksheet: 4 });
      expect(edited.lists).toBe(3);
      expect(edited.writes).toEqual({ table: 2, sheet: 3 });
      const table = await tableByEmail();
      const after = rowsByEmail();
      for (const e of ['p1@x.test', 'p2@x.test']) expect(after.get(e)?.text.name).toMatch(/^table edit \d+$/);
      expect(table.get('p4@x.test')?.full_name).toBe('sheet edit 4');
      expect(after.has('p3@x.test')).toBe(false);
      expect(table.has('p5@x.test')).toBe(false);
      expect((await run()).writes).toEqual({ table: 0, sheet: 0 });
    });
  },
);
