/**
 * Two-way sync (issue 25) against the emulator and a real PostgreSQL table, counting the
 * writes on both sides: the table with a trigger, the worksheet by the requests the
 * emulator received.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { runTwoWay } from '../../src/sync/two-way/two-way-run.ts';
import { createHarness, type Harness } from '../helpers/sync-harness.ts';
import { pgQuery, PG_URL } from '../helpers/pg.ts';

const SCHEMA = `tw_${process.pid}`;
const TABLE = `${SCHEMA}.contacts`;

const JOB = (conflict = 'newest') => `name: contacts
source: { type: postgres, urlEnv: TW_DB, table: ${TABLE}, keyColumn: id, updatedAtColumn: updated_at, allowPrivilegedSource: true }
target:
  worksheet: contacts
  mode: two-way
  key: email
  conflict: ${conflict}
fields:
  email: email
  name: full_name
  tier: { from: tier, conflict: source }
  credit: { from: credit_limit, conflict: worksheet }
  note: { from: note, conflict: manual }
`;

let h: Harness;
let sheet: WorksheetStructure;
let client: PlatformClient;

const tableWrites = async () =>
  Number((await pgQuery<{ n: string }>(`SELECT n FROM ${SCHEMA}.writes`))[0]!.n);
const sheetWrites = () =>
  h.emulator.requests.filter(
    (r) => r.method !== 'GET' && /\/rows(\/|$)/.test(r.path) && !r.path.endsWith('/list'),
  ).length;
const liveRows = () => h.emulator.state.rows(sheet.id);
const byEmail = () => new Map(liveRows().map((r) => [r.text.email ?? '', r]));
const tableRows = () =>
  pgQuery<{
    id: number;
    email: string | null;
    full_name: string | null;
    tier: string | null;
    credit_limit: string | null;
    note: string | null;
  }>(`SELECT id, email, full_name, tier, credit_limit::text AS credit_limit, note FROM ${TABLE} ORDER BY id`);
const optionKey = (text: string) =>
  sheet.fields.find((f) => f.alias === 'tier')!.options!.find((o) => o.value === text)!.key;

async function run() {
  const { record } = await h.runJob('contacts');
  expect(record.status, record.message).toBe('completed');
  return record;
}

beforeAll(async () => {
  h = await createHarness('two-way', { requestLogLimit: 1_000_000 }, { TW_DB: PG_URL });
  await pgQuery(
    `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`,
    `CREATE SCHEMA ${SCHEMA}`,
    `CREATE TABLE ${TABLE} (id serial PRIMARY KEY, email text, full_name text, tier text,
       credit_limit numeric(12,2), note text, updated_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TABLE ${SCHEMA}.writes (n bigint NOT NULL)`,
    `INSERT INTO ${SCHEMA}.writes VALUES (0)`,
    `CREATE FUNCTION ${SCHEMA}.touch() RETURNS trigger AS $$ BEGIN
       IF NEW.updated_at = OLD.updated_at THEN NEW.updated_at := now(); END IF; RETURN NEW; END $$ LANGUAGE plpgsql`,
    `CREATE TRIGGER touch BEFORE UPDATE ON ${TABLE} FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.touch()`,
    `CREATE FUNCTION ${SCHEMA}.count_write() RETURNS trigger AS $$ BEGIN
       UPDATE ${SCHEMA}.writes SET n = n + 1; RETURN NULL; END $$ LANGUAGE plpgsql`,
    `CREATE TRIGGER counted AFTER INSERT OR UPDATE OR DELETE ON ${TABLE} FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.count_write()`,
    // 400 records; the first 150 are also in the worksheet, every 10th with another name.
    `INSERT INTO ${TABLE} (email, full_name, tier, credit_limit, note, updated_at)
       SELECT 't' || i || '@x.test', 'Table ' || i, (ARRAY['Gold','Silver','Bronze'])[1 + i % 3], i * 10, NULL,
              '2024-01-01T00:00:00Z' FROM generate_series(0, 399) i`,
  );
  sheet = h.emulator.createWorksheet(h.appId, {
    name: 'Contacts',
    alias: 'contacts',
    fields: [
      { name: 'Email', alias: 'email', type: 'Text' },
      { name: 'Name', alias: 'name', type: 'Text' },
      {
        name: 'Tier',
        alias: 'tier',
        type: 'SingleSelect',
        options: [
          { value: 'Gold', index: 1 },
          { value: 'Silver', index: 2 },
          { value: 'Bronze', index: 3 },
        ],
      },
      { name: 'Credit', alias: 'credit', type: 'Number' },
      { name: 'Note', alias: 'note', type: 'Text' },
    ],
  });
  client = h.rt.clientFor();
  const seed = (email: string, name: string, i: number) => ({
    fields: [
      { id: 'email', value: email },
      { id: 'name', value: name },
      { id: 'tier', value: [optionKey(['Gold', 'Silver', 'Bronze'][i % 3]!)] },
      { id: 'credit', value: i * 10 },
    ],
  });
  const rows = [
    ...Array.from({ length: 150 }, (_, i) =>
      seed(`t${i}@x.test`, i % 10 === 0 ? `Sheet ${i}` : `Table ${i}`, i),
    ),
    ...Array.from({ length: 98 }, (_, i) => seed(`w${i}@x.test`, `Sheet only ${i}`, i)),
    seed('dup@x.test', 'Dup A', 1),
    seed('dup@x.test', 'Dup B', 2),
  ];
  await client.rows.batchCreate(sheet.id, { rows: rows.slice(0, 125) });
  await client.rows.batchCreate(sheet.id, { rows: rows.slice(125) });
  await h.writeJob('contacts', JOB());
}, 60_000);

afterAll(async () => {
  await h?.close();
  await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
});

describe('two-way sync with a postgres table (issue 25)', () => {
  it('first run: every unambiguous record once on both sides, matched ones merged, the shared key a conflict', async () => {
    await run();
    const table = await tableRows();
    const sheetRows = liveRows();
    // 400 table + 98 worksheet-only; 250 worksheet + 250 table-only.
    expect(table).toHaveLength(498);
    expect(sheetRows).toHaveLength(500);
    expect(new Set(table.map((r) => r.email)).size).toBe(498);
    expect(table.some((r) => r.email === 'dup@x.test')).toBe(false);
    const emails = sheetRows.map((r) => r.text.email);
    expect(emails.filter((e) => e === 'dup@x.test')).toHaveLength(2);
    expect(new Set(emails).size).toBe(499);
    // Matched with differing names: the worksheet was edited later than updated_at (newest).
    expect(table.find((r) => r.email === 't10@x.test')?.full_name).toBe('Sheet 10');
    expect(byEmail().get('t300@x.test')?.text).toMatchObject({
      name: 'Table 300',
      tier: 'Gold',
      credit: '3000',
    });
    expect(table.find((r) => r.email === 'w5@x.test')).toMatchObject({
      full_name: 'Sheet only 5',
      tier: 'Bronze',
      credit_limit: '50.00',
    });
    const conflicts = await h.rt.redis.hgetall(`${h.rt.statePrefix}:twoway:contacts:conflicts`);
    expect(Object.values(conflicts).map((c) => JSON.parse(c) as { kind: string; records: unknown })).toEqual([
      expect.objectContaining({ kind: 'ambiguous', records: { source: [], worksheet: expect.any(Array) } }),
    ]);
  }, 120_000);

  it('runs again with no edits make no write on either side', async () => {
    const before = { table: await tableWrites(), sheet: sheetWrites() };
    for (let i = 0; i < 5; i++) await run();
    expect({ table: await tableWrites(), sheet: sheetWrites() }).toEqual(before);
  }, 120_000);

  it('edits on both sides: one-side edits copied, different fields both kept, each policy, deletes, creates', async () => {
    const rows = byEmail();
    const rowOf = (email: string) => rows.get(email)!.id;
    const edit = (email: string, fields: Array<{ id: string; value: unknown }>) =>
      client.rows.update(sheet.id, rowOf(email), { fields });
    // Table-only and worksheet-only edits.
    for (let i = 20; i < 40; i++)
      await pgQuery(`UPDATE ${TABLE} SET full_name = 'T edit ${i}' WHERE email = 't${i}@x.test'`);
    for (let i = 40; i < 60; i++) await edit(`t${i}@x.test`, [{ id: 'name', value: `W edit ${i}` }]);
    // Different fields of one record on each side.
    for (let i = 60; i < 70; i++) {
      await pgQuery(`UPDATE ${TABLE} SET tier = 'Gold' WHERE email = 't${i}@x.test'`);
      await edit(`t${i}@x.test`, [{ id: 'name', value: `Both ${i}` }]);
    }
    // The same field on both sides, one per policy: name newest (the table's edit is later),
    // tier source, credit worksheet, note manual.
    await edit('t70@x.test', [{ id: 'name', value: 'W newest' }]);
    await pgQuery(
      `UPDATE ${TABLE} SET full_name = 'T newest', updated_at = now() + interval '1 hour' WHERE email = 't70@x.test'`,
    );
    await edit('t71@x.test', [{ id: 'tier', value: [optionKey('Bronze')] }]);
    await pgQuery(`UPDATE ${TABLE} SET tier = 'Silver' WHERE email = 't71@x.test'`);
    await edit('t72@x.test', [{ id: 'credit', value: 111 }]);
    await pgQuery(`UPDATE ${TABLE} SET credit_limit = 222 WHERE email = 't72@x.test'`);
    await edit('t73@x.test', [{ id: 'note', value: 'W note' }]);
    await pgQuery(`UPDATE ${TABLE} SET note = 'T note' WHERE email = 't73@x.test'`);
    // Deletes on each side, and new records on each side.
    await pgQuery(
      `DELETE FROM ${TABLE} WHERE email IN ('t80@x.test','t81@x.test','t82@x.test','t83@x.test','t84@x.test')`,
    );
    await client.rows.batchDelete(sheet.id, {
      rowIds: [85, 86, 87, 88, 89].map((i) => rowOf(`t${i}@x.test`)),
    });
    await pgQuery(
      `INSERT INTO ${TABLE} (email, full_name) SELECT 'newt' || i || '@x.test', 'New T ' || i FROM generate_series(1, 10) i`,
    );
    await client.rows.batchCreate(sheet.id, {
      rows: Array.from({ length: 10 }, (_, i) => ({
        fields: [
          { id: 'email', value: `neww${i}@x.test` },
          { id: 'name', value: `New W ${i}` },
        ],
      })),
    });

    await run();
    const table = new Map((await tableRows()).map((r) => [r.email, r]));
    const sheetNow = byEmail();
    for (let i = 20; i < 40; i++) expect(sheetNow.get(`t${i}@x.test`)?.text.name).toBe(`T edit ${i}`);
    for (let i = 40; i < 60; i++) expect(table.get(`t${i}@x.test`)?.full_name).toBe(`W edit ${i}`);
    for (let i = 60; i < 70; i++) {
      expect(table.get(`t${i}@x.test`)).toMatchObject({ full_name: `Both ${i}`, tier: 'Gold' });
      expect(sheetNow.get(`t${i}@x.test`)?.text).toMatchObject({ name: `Both ${i}`, tier: 'Gold' });
    }
    expect(sheetNow.get('t70@x.test')?.text.name).toBe('T newest');
    expect(table.get('t71@x.test')?.tier).toBe('Silver');
    expect(sheetNow.get('t71@x.test')?.text.tier).toBe('Silver');
    expect(table.get('t72@x.test')?.credit_limit).toBe('111.00');
    expect(sheetNow.get('t72@x.test')?.text.credit).toBe('111');
    // manual: neither side written, a conflict recorded.
    expect(table.get('t73@x.test')?.note).toBe('T note');
    expect(sheetNow.get('t73@x.test')?.text.note).toBe('W note');
    const conflicts = Object.keys(await h.rt.redis.hgetall(`${h.rt.statePrefix}:twoway:contacts:conflicts`));
    expect(conflicts).toContain(`fields:${table.get('t73@x.test')!.id}`);
    for (let i = 80; i < 90; i++) {
      expect(table.has(`t${i}@x.test`)).toBe(false);
      expect(sheetNow.has(`t${i}@x.test`)).toBe(false);
    }
    for (let i = 1; i <= 10; i++) expect(sheetNow.get(`newt${i}@x.test`)?.text.name).toBe(`New T ${i}`);
    for (let i = 0; i < 10; i++) expect(table.get(`neww${i}@x.test`)?.full_name).toBe(`New W ${i}`);

    const before = { table: await tableWrites(), sheet: sheetWrites() };
    await run();
    expect({ table: await tableWrites(), sheet: sheetWrites() }).toEqual(before);
  }, 180_000);

  it('a run stopped while reading, writing the worksheet or writing the table leaves no duplicate and no lost edit', async () => {
    const run0 = await h.rt.prepareRun('contacts');
    for (const phase of ['read', 'write-worksheet', 'write-source'] as const) {
      await pgQuery(`UPDATE ${TABLE} SET full_name = 'Crash ${phase}' WHERE email = 't100@x.test'`);
      await pgQuery(`INSERT INTO ${TABLE} (email, full_name) VALUES ('crash-${phase}@x.test', 'C')`);
      await client.rows.update(sheet.id, byEmail().get('t101@x.test')!.id, {
        fields: [{ id: 'note', value: `Crash ${phase}` }],
      });
      await client.rows.batchCreate(sheet.id, {
        rows: [{ fields: [{ id: 'email', value: `crashw-${phase}@x.test` }] }],
      });
      // Stopped at the phase, after the run has written everything before it.
      const stop = new Error(`stopped at ${phase}`);
      await expect(
        runTwoWay({
          spec: run0.spec,
          file: run0.file,
          client: run0.client,
          prepared: run0.prepared!,
          redis: h.rt.redis,
          prefix: h.rt.statePrefix,
          env: h.env,
          log: h.rt.logger,
          onPhase: (at) => {
            if (at === phase) throw stop;
          },
        }),
      ).rejects.toBe(stop);
      await run();
      const table = await tableRows();
      const sheetRows = liveRows();
      expect(new Set(table.map((r) => r.email)).size).toBe(table.length);
      const emails = sheetRows.map((r) => r.text.email).filter((e) => e !== 'dup@x.test');
      expect(new Set(emails).size).toBe(emails.length);
      expect(byEmail().get('t100@x.test')?.text.name).toBe(`Crash ${phase}`);
      expect(table.find((r) => r.email === 't101@x.test')?.note).toBe(`Crash ${phase}`);
      expect(byEmail().has(`crash-${phase}@x.test`)).toBe(true);
      expect(table.some((r) => r.email === `crashw-${phase}@x.test`)).toBe(true);
    }
  }, 180_000);

  it('a delete of 30% of the table waits as pending deletes', async () => {
    const before = liveRows().length;
    const gone = await pgQuery<{ id: number }>(
      `DELETE FROM ${TABLE} WHERE id IN (SELECT id FROM ${TABLE} WHERE email LIKE 't%' ORDER BY id LIMIT 150) RETURNING id`,
    );
    expect(gone).toHaveLength(150);
    await run();
    expect(liveRows()).toHaveLength(before);
    const pending = await h.rt.redis.hgetall(`${h.rt.statePrefix}:twoway:contacts:deletes`);
    // t73 was edited in the worksheet (its manual conflict): kept, and created in the table again.
    expect(Object.keys(pending)).toHaveLength(149);
    expect((await tableRows()).filter((r) => r.email === 't73@x.test')).toMatchObject([{ note: 'W note' }]);
  }, 120_000);
});
