/**
 * Two-way with a worksheet on the other side (issue 25): two chained jobs run from the
 * CLI, a PostgreSQL table ↔ worksheet A, and worksheet A ↔ worksheet B of another app
 * (its own credentials, `credentialsEnvPrefix`). One person's edit, on the table and then
 * on worksheet B, makes exactly one write on each other side, and nothing on the runs
 * after. Writes are counted by the emulator's request log (per worksheet) and by a
 * trigger counting writes in the table.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { pgQuery, PG_URL } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const SCHEMA = `twws_${process.pid}`;
const TABLE = `${SCHEMA}.people`;
const TIERS = [
  { value: 'Gold', index: 1 },
  { value: 'Silver', index: 2 },
  { value: 'Bronze', index: 3 },
];
const FIELDS = [
  { name: 'Email', alias: 'email', type: 'Text' as const },
  { name: 'Name', alias: 'name', type: 'Text' as const },
  { name: 'Tier', alias: 'tier', type: 'SingleSelect' as const, options: TIERS },
];

let h: Harness;
let sheetA: WorksheetStructure;
let sheetB: WorksheetStructure;
let clientB: PlatformClient;
const children: ChildProcess[] = [];

const cli = (...args: string[]) => spawnCli(h, children, args).exited;
async function run(job: string): Promise<void> {
  const done = await cli('run', job);
  expect(done.code, done.stderr).toBe(0);
}
/** Both jobs once each, in the order a schedule would run them. */
async function runBoth(): Promise<void> {
  await run('people-db');
  await run('people-crm');
}
const writesTo = (sheet: WorksheetStructure) =>
  h.emulator.requests.filter(
    (r) =>
      r.method !== 'GET' &&
      r.path.includes(sheet.id) &&
      /\/rows(\/|$)/.test(r.path) &&
      !r.path.endsWith('/list'),
  ).length;
const tableWrites = async () =>
  Number((await pgQuery<{ n: string }>(`SELECT n FROM ${SCHEMA}.writes`))[0]!.n);
const counts = async () => ({ a: writesTo(sheetA), b: writesTo(sheetB), table: await tableWrites() });
const byEmail = (sheet: WorksheetStructure) =>
  new Map(h.emulator.state.rows(sheet.id).map((r) => [r.text.email ?? '', r]));
const tableByEmail = async () =>
  new Map(
    (
      await pgQuery<{ email: string; full_name: string | null; tier: string | null }>(
        `SELECT email, full_name, tier FROM ${TABLE}`,
      )
    ).map((r) => [r.email, r]),
  );

beforeAll(async () => {
  h = await createHarness('two-way-ws', { requestLogLimit: 1_000_000 }, { TWWS_DB: PG_URL });
  await pgQuery(
    `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`,
    `CREATE SCHEMA ${SCHEMA}`,
    `CREATE TABLE ${TABLE} (id serial PRIMARY KEY, email text, full_name text, tier text,
       updated_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE FUNCTION ${SCHEMA}.touch() RETURNS trigger AS $$ BEGIN NEW.updated_at := clock_timestamp(); RETURN NEW; END $$ LANGUAGE plpgsql`,
    `CREATE TRIGGER touch BEFORE UPDATE ON ${TABLE} FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.touch()`,
    `CREATE TABLE ${SCHEMA}.writes (n bigint NOT NULL)`,
    `INSERT INTO ${SCHEMA}.writes VALUES (0)`,
    `CREATE FUNCTION ${SCHEMA}.count_write() RETURNS trigger AS $$ BEGIN
       UPDATE ${SCHEMA}.writes SET n = n + 1; RETURN NULL; END $$ LANGUAGE plpgsql`,
    `CREATE TRIGGER counted AFTER INSERT OR UPDATE OR DELETE ON ${TABLE} FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.count_write()`,
    `INSERT INTO ${TABLE} (email, full_name, tier)
       SELECT 'p' || i || '@x.test', 'Person ' || i, (ARRAY['Gold','Silver','Bronze'])[1 + i % 3]
         FROM generate_series(1, 12) i`,
  );
  sheetA = h.emulator.createWorksheet(h.appId, { name: 'People', alias: 'people', fields: FIELDS });
  const crm = h.emulator.createApp({ name: 'crm' });
  sheetB = h.emulator.createWorksheet(crm.appId, { name: 'Contacts', alias: 'contacts', fields: FIELDS });
  h.env.CRM_APPKEY = crm.appKey;
  h.env.CRM_SIGN = crm.sign;
  h.env.CRM_API_URL = h.emulator.url;
  clientB = h.rt.clientFor('CRM_');
  await h.writeJob(
    'people-db',
    `name: people-db
source: { type: postgres, urlEnv: TWWS_DB, table: ${TABLE}, keyColumn: id, updatedAtColumn: updated_at, allowPrivilegedSource: true }
target: { worksheet: people, mode: two-way, key: email, conflict: source }
fields:
  email: email
  name: full_name
  tier: tier
`,
  );
  await h.writeJob(
    'people-crm',
    `name: people-crm
source: { type: worksheet, worksheet: contacts, credentialsEnvPrefix: CRM_ }
target: { worksheet: people, mode: two-way, key: email }
fields:
  email: email
  name: name
  tier: tier
`,
  );
}, 60_000);

afterEach(() => killChildren(children));
afterAll(async () => {
  killChildren(children);
  await h?.close();
  await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
});

describe('two-way with a worksheet of another app (issue 25)', { timeout: 180_000 }, () => {
  it('check and plan read the other worksheet through its own credentials before any write', async () => {
    const check = await cli('check', 'people-crm');
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toMatch(/source worksheet\s+ok\s+Contacts \(.+\) through CRM_: 3 fields/);
    await run('people-db');
    expect(h.emulator.state.rows(sheetA.id)).toHaveLength(12);
    const before = await counts();
    const plan = await cli('plan', 'people-crm');
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(
      'plan people-crm (two-way): read 0 source worksheet records, 12 worksheet rows',
    );
    expect(plan.stdout).toContain('source sheet   create 12, update 0, delete 0');
    // The structure and a page of each worksheet, and one batch create of 12.
    expect(plan.stdout).toContain('API calls      5 (reads 4, batch creates 1');
    expect(await counts()).toEqual(before);
  });

  it('the chain settles: every record on all three sides, then no write on any side', async () => {
    await run('people-crm');
    const b = byEmail(sheetB);
    expect(b.size).toBe(12);
    expect(b.get('p4@x.test')?.text).toMatchObject({ name: 'Person 4', tier: 'Silver' });
    const before = await counts();
    for (let i = 0; i < 3; i++) await runBoth();
    expect(await counts()).toEqual(before);
  });

  it("one person's edit on the table: one write on A, one on B, then nothing", async () => {
    await pgQuery(`UPDATE ${TABLE} SET full_name = 'Edited in the CRM' WHERE email = 'p5@x.test'`);
    const before = await counts();
    await runBoth();
    const after = await counts();
    expect(after).toEqual({ a: before.a + 1, b: before.b + 1, table: before.table });
    expect(byEmail(sheetA).get('p5@x.test')?.text.name).toBe('Edited in the CRM');
    expect(byEmail(sheetB).get('p5@x.test')?.text.name).toBe('Edited in the CRM');
    for (let i = 0; i < 2; i++) await runBoth();
    expect(await counts()).toEqual(after);
  });

  it("one person's edit on worksheet B: one write on A, one in the table, then nothing", async () => {
    const row = byEmail(sheetB).get('p7@x.test')!;
    const gold = sheetB.fields.find((f) => f.alias === 'tier')!.options!.find((o) => o.value === 'Gold')!.key;
    await clientB.rows.update(sheetB.id, row.id, { fields: [{ id: 'tier', value: [gold] }] });
    const before = await counts();
    await run('people-crm');
    await run('people-db');
    const after = await counts();
    expect(after).toEqual({ a: before.a + 1, b: before.b, table: before.table + 1 });
    expect(byEmail(sheetA).get('p7@x.test')?.text.tier).toBe('Gold');
    expect((await tableByEmail()).get('p7@x.test')?.tier).toBe('Gold');
    for (let i = 0; i < 2; i++) await runBoth();
    expect(await counts()).toEqual(after);
  });

  it('a record created and one deleted on B reach A and the table, once', async () => {
    await clientB.rows.batchCreate(sheetB.id, {
      rows: [
        {
          fields: [
            { id: 'email', value: 'new@x.test' },
            { id: 'name', value: 'New on B' },
          ],
        },
      ],
    });
    await clientB.rows.batchDelete(sheetB.id, { rowIds: [byEmail(sheetB).get('p9@x.test')!.id] });
    const before = await counts();
    await run('people-crm');
    await run('people-db');
    const after = await counts();
    // A: one batch create, one batch delete; the table: one insert, one delete.
    expect(after).toEqual({ a: before.a + 2, b: before.b, table: before.table + 2 });
    const table = await tableByEmail();
    expect(table.get('new@x.test')?.full_name).toBe('New on B');
    expect(table.has('p9@x.test')).toBe(false);
    expect(byEmail(sheetA).has('p9@x.test')).toBe(false);
    for (let i = 0; i < 2; i++) await runBoth();
    expect(await counts()).toEqual(after);
  });
});
