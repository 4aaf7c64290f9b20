/**
 * `rowbridge run` of a two-way job killed with SIGKILL (issue 25), at three points, each
 * seen from outside the process: while it reads the table (its SELECT waits on a lock the
 * test holds), while it writes the worksheet (its first row write in the emulator's request
 * log; writes are slowed), while it writes the table (its transaction holds a write in
 * pg_stat_activity; a trigger slows each row). Then `run` again: no record twice and no
 * edit lost, on either side.
 */
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { killChildren, spawnCli, until } from '../helpers/cli-process.ts';
import { pgQuery, PG_URL } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const SCHEMA = `twkill_${process.pid}`;
const TABLE = `${SCHEMA}.people`;
const N = 100;

let h: Harness;
let sheet: WorksheetStructure;
let client: PlatformClient;
const children: ChildProcess[] = [];

const sheetWrites = () =>
  h.emulator.requests.filter(
    (r) => r.method !== 'GET' && /\/rows(\/|$)/.test(r.path) && !r.path.endsWith('/list'),
  ).length;
const rowsByEmail = () => new Map(h.emulator.state.rows(sheet.id).map((r) => [r.text.email ?? '', r]));
const tableRows = () =>
  pgQuery<{ id: number; email: string; full_name: string | null }>(
    `SELECT id, email, full_name FROM ${TABLE} ORDER BY id`,
  );
/** Backends of other sessions working on this test's table, in a state `where` picks. */
const backends = async (where: string) =>
  Number(
    (
      await pgQuery<{ n: string }>(
        `SELECT count(*) AS n FROM pg_stat_activity
          WHERE pid <> pg_backend_pid() AND query LIKE '%${SCHEMA}%' AND query NOT LIKE '%pg_stat_activity%' AND ${where}`,
      )
    )[0]!.n,
  );

beforeAll(async () => {
  h = await createHarness(
    'two-way-kill',
    { faults: { seed: 7, latencyMs: [40, 60], writesOnly: true }, requestLogLimit: 1_000_000 },
    // Far longer than the test: only an immediate take-over lets the second run go.
    { TWKILL_DB: PG_URL, ROWBRIDGE_LOCK_DURATION_MS: '600000' },
  );
  await pgQuery(
    `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`,
    `CREATE SCHEMA ${SCHEMA}`,
    `CREATE TABLE ${TABLE} (id serial PRIMARY KEY, email text, full_name text)`,
    `CREATE FUNCTION ${SCHEMA}.slow() RETURNS trigger AS $$ BEGIN PERFORM pg_sleep(0.05); RETURN NULL; END $$ LANGUAGE plpgsql`,
    `CREATE TRIGGER slow AFTER INSERT OR UPDATE OR DELETE ON ${TABLE} FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.slow()`,
    `INSERT INTO ${TABLE} (email, full_name) SELECT 'p' || i || '@x.test', 'Person ' || i FROM generate_series(1, ${N}) i`,
  );
  sheet = h.emulator.createWorksheet(h.appId, {
    name: 'People',
    alias: 'people',
    fields: [
      { name: 'Email', alias: 'email', type: 'Text' },
      { name: 'Name', alias: 'name', type: 'Text' },
    ],
  });
  client = h.rt.clientFor();
  await h.writeJob(
    'people',
    `name: people
source: { type: postgres, urlEnv: TWKILL_DB, table: ${TABLE}, keyColumn: id, allowPrivilegedSource: true }
target: { worksheet: people, mode: two-way, key: email, conflict: source }
fields: { email: email, name: full_name }
`,
  );
  const first = await spawnCli(h, children, ['run', 'people']).exited;
  expect(first.code, first.stderr).toBe(0);
  expect(h.emulator.state.rows(sheet.id)).toHaveLength(N);
}, 120_000);

afterAll(async () => {
  killChildren(children);
  await h?.close();
  await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
});

describe('two-way run killed with SIGKILL, then run again (issue 25)', { timeout: 180_000 }, () => {
  it.each([
    ['reading the table', 'read'],
    ['writing the worksheet', 'worksheet'],
    ['writing the table', 'table'],
  ] as const)('killed while %s: no duplicate, no lost edit on either side', async (_what, at) => {
    // An edit of each side to copy to the other, and a new record on each side.
    for (let i = 1; i <= 30; i++)
      await pgQuery(`UPDATE ${TABLE} SET full_name = 'T-${at}-${i}' WHERE email = 'p${i}@x.test'`);
    const rows = rowsByEmail();
    for (let i = 31; i <= 50; i++)
      await client.rows.update(sheet.id, rows.get(`p${i}@x.test`)!.id, {
        fields: [{ id: 'name', value: `W-${at}-${i}` }],
      });
    await pgQuery(`INSERT INTO ${TABLE} (email, full_name) VALUES ('new-t-${at}@x.test', 'NT')`);
    await client.rows.batchCreate(sheet.id, {
      rows: [
        {
          fields: [
            { id: 'email', value: `new-w-${at}@x.test` },
            { id: 'name', value: 'NW' },
          ],
        },
      ],
    });
    const writesBefore = sheetWrites();

    const lock = new pg.Client({ connectionString: PG_URL });
    if (at === 'read') {
      await lock.connect();
      await lock.query('BEGIN');
      await lock.query(`LOCK TABLE ${TABLE} IN ACCESS EXCLUSIVE MODE`);
    }
    const first = spawnCli(h, children, ['run', 'people']);
    try {
      if (at === 'read')
        await until(async () => (await backends(`wait_event_type = 'Lock'`)) > 0, 60_000, 'the SELECT');
      else if (at === 'worksheet') await until(() => sheetWrites() > writesBefore, 60_000, 'a row write');
      else await until(async () => (await backends('backend_xid IS NOT NULL')) > 0, 60_000, 'a table write');
      first.child.kill('SIGKILL');
      expect((await first.exited).code).toBe(null);
    } finally {
      if (at === 'read') await lock.query('ROLLBACK');
      await lock.end().catch(() => undefined);
    }
    // Killed mid-way: a side still lacks some of the edits.
    await until(async () => (await backends('true')) === 0, 30_000, 'the killed session to end');
    const table = new Map((await tableRows()).map((r) => [r.email, r]));
    const sheetNow = rowsByEmail();
    const copied = [
      ...Array.from(
        { length: 30 },
        (_, i) => sheetNow.get(`p${i + 1}@x.test`)?.text.name === `T-${at}-${i + 1}`,
      ),
      ...Array.from(
        { length: 20 },
        (_, i) => table.get(`p${i + 31}@x.test`)?.full_name === `W-${at}-${i + 31}`,
      ),
    ];
    expect(copied.filter(Boolean).length).toBeLessThan(50);
    if (at === 'table') expect(copied.slice(0, 30).every(Boolean)).toBe(true);

    const second = await spawnCli(h, children, ['run', 'people']).exited;
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain('resuming run');

    const finalTable = await tableRows();
    const finalSheet = h.emulator.state.rows(sheet.id);
    const tableEmails = finalTable.map((r) => r.email);
    const sheetEmails = finalSheet.map((r) => r.text.email ?? '');
    expect(new Set(tableEmails).size).toBe(tableEmails.length);
    expect(new Set(sheetEmails).size).toBe(sheetEmails.length);
    expect(new Set(sheetEmails)).toEqual(new Set(tableEmails));
    const byEmail = new Map(finalTable.map((r) => [r.email, r.full_name]));
    const sheetByEmail = new Map(finalSheet.map((r) => [r.text.email ?? '', r.text.name]));
    for (let i = 1; i <= 30; i++) {
      expect(byEmail.get(`p${i}@x.test`)).toBe(`T-${at}-${i}`);
      expect(sheetByEmail.get(`p${i}@x.test`)).toBe(`T-${at}-${i}`);
    }
    for (let i = 31; i <= 50; i++) {
      expect(byEmail.get(`p${i}@x.test`)).toBe(`W-${at}-${i}`);
      expect(sheetByEmail.get(`p${i}@x.test`)).toBe(`W-${at}-${i}`);
    }
    expect(sheetByEmail.get(`new-t-${at}@x.test`)).toBe('NT');
    expect(byEmail.get(`new-w-${at}@x.test`)).toBe('NW');
  });
});
