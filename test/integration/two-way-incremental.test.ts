/**
 * Two-way runs read what changed since the last run (issue 25) against the emulator and a
 * real PostgreSQL table: a quiet run reads no record whole and makes one key scan and one
 * changed-rows request; after edits and deletes on both sides the run reads exactly the
 * edited records (and their other side) whole and still finds the deletes; rowbridge's
 * own writes are read back and not taken for edits. A table without updatedAtColumn is
 * read by row hash. A conflict resolved while a run is under way is not overwritten by it.
 * Writes are counted on both sides: the table with a trigger, the worksheet by the
 * emulator's request log.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { twoWayReportKey } from '../../src/queue/two-way-job.ts';
import { runTwoWay } from '../../src/sync/two-way/two-way-run.ts';
import type { TwoWayReport } from '../../src/sync/two-way/two-way-run.ts';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { pgQuery, PG_URL } from '../helpers/pg.ts';
import { PAST_MARGIN_MS, SHORT_MARGIN } from '../helpers/cursor-margin.ts';
import { createHarness, type Harness } from '../helpers/sync-harness.ts';

const SCHEMA = `twinc_${process.pid}`;
const children: ChildProcess[] = [];
let h: Harness;
let client: PlatformClient;
const sheets: Record<string, WorksheetStructure> = {};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const tableWrites = async () =>
  Number((await pgQuery<{ n: string }>(`SELECT n FROM ${SCHEMA}.writes`))[0]!.n);
const sheetWrites = () =>
  h.emulator.requests.filter(
    (r) => r.method !== 'GET' && /\/rows(\/|$)/.test(r.path) && !r.path.endsWith('/list'),
  ).length;
const rowsOf = (job: string) =>
  new Map(h.emulator.state.rows(sheets[job]!.id).map((r) => [r.text.email ?? '', r]));
const tableOf = async (table: string) =>
  new Map(
    (
      await pgQuery<{ id: number; email: string; full_name: string | null; note: string | null }>(
        `SELECT id, email, full_name, ${table === 'contacts' ? 'note' : 'NULL AS note'} FROM ${SCHEMA}.${table}`,
      )
    ).map((r) => [r.email, r]),
  );
const editRow = (job: string, email: string, fields: Array<{ id: string; value: unknown }>) =>
  client.rows.update(sheets[job]!.id, rowsOf(job).get(email)!.id, { fields });

/** Runs the job; answers its report, the list requests it made and the writes on each side. */
async function run(job: string) {
  const before = { requests: h.emulator.requests.length, table: await tableWrites(), sheet: sheetWrites() };
  const { record } = await h.runJob(job);
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
  h = await createHarness(
    'two-way-incremental',
    { requestLogLimit: 1_000_000 },
    { TWI_DB: PG_URL, ...SHORT_MARGIN },
  );
  client = h.rt.clientFor();
  await pgQuery(
    `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`,
    `CREATE SCHEMA ${SCHEMA}`,
    `CREATE TABLE ${SCHEMA}.writes (n bigint NOT NULL)`,
    `INSERT INTO ${SCHEMA}.writes VALUES (0)`,
    `CREATE FUNCTION ${SCHEMA}.count_write() RETURNS trigger AS $$ BEGIN
       UPDATE ${SCHEMA}.writes SET n = n + 1; RETURN NULL; END $$ LANGUAGE plpgsql`,
    `CREATE FUNCTION ${SCHEMA}.touch() RETURNS trigger AS $$ BEGIN NEW.updated_at := now(); RETURN NEW; END $$ LANGUAGE plpgsql`,
    `CREATE TABLE ${SCHEMA}.contacts (id serial PRIMARY KEY, email text, full_name text, note text,
       updated_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TRIGGER touch BEFORE UPDATE ON ${SCHEMA}.contacts FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.touch()`,
    `CREATE TABLE ${SCHEMA}.plain (id serial PRIMARY KEY, email text, full_name text)`,
    `INSERT INTO ${SCHEMA}.contacts (email, full_name, note) SELECT 't' || i || '@x.test', 'T ' || i, 'n' FROM generate_series(0, 59) i`,
    `INSERT INTO ${SCHEMA}.plain (email, full_name) SELECT 'p' || i || '@x.test', 'P ' || i FROM generate_series(0, 29) i`,
  );
  for (const t of ['contacts', 'plain'])
    await pgQuery(
      `CREATE TRIGGER counted AFTER INSERT OR UPDATE OR DELETE ON ${SCHEMA}.${t} FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.count_write()`,
    );
  for (const name of ['contacts', 'plain'])
    sheets[name] = h.emulator.createWorksheet(h.appId, {
      name,
      alias: name,
      fields: [
        { name: 'Email', alias: 'email', type: 'Text' },
        { name: 'Name', alias: 'name', type: 'Text' },
        { name: 'Note', alias: 'note', type: 'Text' },
      ],
    });
  // 20 records on both sides, 20 on the worksheet only.
  await client.rows.batchCreate(sheets.contacts!.id, {
    rows: [
      ...Array.from({ length: 20 }, (_, i) => [`t${i}@x.test`, `T ${i}`]),
      ...Array.from({ length: 20 }, (_, i) => [`w${i}@x.test`, `W ${i}`]),
    ].map(([email, name]) => ({
      fields: [
        { id: 'email', value: email },
        { id: 'name', value: name },
        { id: 'note', value: 'n' },
      ],
    })),
  });
  await h.writeJob(
    'contacts',
    `name: contacts
source: { type: postgres, urlEnv: TWI_DB, table: ${SCHEMA}.contacts, keyColumn: id, updatedAtColumn: updated_at, allowPrivilegedSource: true }
target: { worksheet: contacts, mode: two-way, key: email, conflict: newest }
fields:
  email: email
  name: full_name
  note: { from: note, conflict: manual }
`,
  );
  await h.writeJob(
    'plain',
    `name: plain
source: { type: postgres, urlEnv: TWI_DB, table: ${SCHEMA}.plain, keyColumn: id, allowPrivilegedSource: true }
target: { worksheet: plain, mode: two-way, key: email, conflict: source }
fields: { email: email, name: full_name }
`,
  );
}, 60_000);

afterEach(() => killChildren(children));
afterAll(async () => {
  killChildren(children);
  await h?.close();
  await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
});

describe('two-way runs read what changed since the last run (issue 25)', { timeout: 240_000 }, () => {
  it('settled, a run reads no record whole: one key scan and one changed-rows request, no write', async () => {
    const first = await run('contacts');
    expect(first.report.reads).toBe('whole');
    expect(first.report.readWhole).toEqual({ source: 60, worksheet: 40 });
    expect(rowsOf('contacts').size).toBe(80);
    // The next run reads back rowbridge's own writes (they moved _updatedAt) and writes nothing.
    await sleep(PAST_MARGIN_MS);
    const second = await run('contacts');
    expect(second.report.reads).toBe('changes');
    expect(second.writes).toEqual({ table: 0, sheet: 0 });
    await sleep(PAST_MARGIN_MS);
    const quiet = await run('contacts');
    expect(quiet.report.reads).toBe('changes');
    expect(quiet.report.readWhole).toEqual({ source: 0, worksheet: 0 });
    expect(quiet.report.counts.linked).toBe(80);
    expect(quiet.lists).toBe(2);
    expect(quiet.writes).toEqual({ table: 0, sheet: 0 });
  });

  it('after edits and deletes on both sides, reads the edited records and their other side only, and finds the deletes', async () => {
    for (const i of [1, 2, 3])
      await pgQuery(
        `UPDATE ${SCHEMA}.contacts SET full_name = 'table edit ${i}' WHERE email = 't${i}@x.test'`,
      );
    for (const i of [4, 5])
      await editRow('contacts', `t${i}@x.test`, [{ id: 'name', value: `sheet edit ${i}` }]);
    await pgQuery(`DELETE FROM ${SCHEMA}.contacts WHERE email = 't6@x.test'`);
    await client.rows.batchDelete(sheets.contacts!.id, { rowIds: [rowsOf('contacts').get('t7@x.test')!.id] });

    const edited = await run('contacts');
    // Table: 3 changed, and the other side of 2 worksheet edits and of 1 worksheet delete.
    // Worksheet: 2 changed, and the other side of 3 table edits and of 1 table delete.
    expect(edited.report.readWhole).toEqual({ source: 6, worksheet: 6 });
    expect(edited.lists).toBe(3);
    expect(edited.writes).toEqual({ table: 3, sheet: 4 });
    const rows = rowsOf('contacts');
    const table = await tableOf('contacts');
    for (const i of [1, 2, 3]) expect(rows.get(`t${i}@x.test`)?.text.name).toBe(`table edit ${i}`);
    for (const i of [4, 5]) expect(table.get(`t${i}@x.test`)?.full_name).toBe(`sheet edit ${i}`);
    expect(rows.has('t6@x.test')).toBe(false);
    expect(table.has('t7@x.test')).toBe(false);

    // Its own writes come back changed on both sides, and are not taken for edits.
    const after = await run('contacts');
    expect(after.report.readWhole.worksheet).toBeGreaterThanOrEqual(3);
    expect(after.writes).toEqual({ table: 0, sheet: 0 });
  });

  it('a table without updatedAtColumn is read by row hash: settled, nothing is read whole; an edit and a delete are found', async () => {
    await run('plain');
    await sleep(PAST_MARGIN_MS);
    await run('plain');
    await sleep(PAST_MARGIN_MS);
    const quiet = await run('plain');
    expect(quiet.report.readWhole).toEqual({ source: 0, worksheet: 0 });
    expect(quiet.writes).toEqual({ table: 0, sheet: 0 });

    await pgQuery(`UPDATE ${SCHEMA}.plain SET full_name = 'hashed edit' WHERE email = 'p1@x.test'`);
    await pgQuery(`DELETE FROM ${SCHEMA}.plain WHERE email = 'p2@x.test'`);
    const edited = await run('plain');
    expect(edited.report.readWhole).toEqual({ source: 1, worksheet: 2 });
    expect(rowsOf('plain').get('p1@x.test')?.text.name).toBe('hashed edit');
    expect(rowsOf('plain').has('p2@x.test')).toBe(false);
    expect(edited.writes).toEqual({ table: 0, sheet: 2 });
    // The stored row hashes follow the table: the deleted record's is gone, the edited one's new.
    const hashKey = `${h.rt.statePrefix}:twoway:plain:rowhash`;
    expect(await h.rt.redis.hlen(hashKey)).toBe(29);
    const after = await run('plain');
    expect(after.report.readWhole).toEqual({ source: 1, worksheet: 1 }); // its own write to p1, both sides
    expect(after.writes).toEqual({ table: 0, sheet: 0 });
  });

  it('a conflict resolved while a run is under way is kept, and written by the next run', async () => {
    await editRow('contacts', 't10@x.test', [{ id: 'note', value: 'sheet note' }]);
    await pgQuery(`UPDATE ${SCHEMA}.contacts SET note = 'table note' WHERE email = 't10@x.test'`);
    await run('contacts');
    const id = `contacts/fields:${(await tableOf('contacts')).get('t10@x.test')!.id}`;
    const key = `${h.rt.statePrefix}:twoway:contacts:conflicts`;
    expect(await h.rt.redis.hkeys(key)).toEqual([id.slice('contacts/'.length)]);

    // The run reads the conflict unresolved; a person resolves it before the run writes.
    const prepared = await h.rt.prepareRun('contacts');
    await runTwoWay({
      spec: prepared.spec,
      file: prepared.file,
      client: prepared.client,
      prepared: prepared.prepared!,
      redis: h.rt.redis,
      prefix: h.rt.statePrefix,
      env: h.env,
      log: h.rt.logger,
      onPhase: async (phase) => {
        if (phase !== 'planned') return;
        const resolved = await spawnCli(h, children, ['conflicts', 'resolve', id, '--take', 'worksheet'])
          .exited;
        expect(resolved.code, resolved.stderr).toBe(0);
      },
    });
    const stored = JSON.parse((await h.rt.redis.hget(key, id.slice('contacts/'.length)))!) as {
      take?: unknown;
    };
    expect(stored.take).toEqual({ worksheet: true });
    expect((await tableOf('contacts')).get('t10@x.test')?.note).toBe('table note');

    await run('contacts');
    expect((await tableOf('contacts')).get('t10@x.test')?.note).toBe('sheet note');
    expect(rowsOf('contacts').get('t10@x.test')?.text.note).toBe('sheet note');
    expect(await h.rt.redis.hkeys(key)).toEqual([]);
  });
  it('a new record with the key of a linked record left out of the plan is ambiguous on both sides, and created nowhere', async () => {
    await sleep(PAST_MARGIN_MS);
    await run('contacts');
    await sleep(PAST_MARGIN_MS);
    expect((await run('contacts')).report.readWhole).toEqual({ source: 0, worksheet: 0 });
    await pgQuery(
      `INSERT INTO ${SCHEMA}.contacts (email, full_name, note) VALUES ('t12@x.test', 'second t12', 'n'), ('fresh@x.test', 'Fresh', 'n')`,
    );
    await client.rows.batchCreate(sheets.contacts!.id, {
      rows: [
        {
          fields: [
            { id: 'email', value: 't13@x.test' },
            { id: 'name', value: 'second t13' },
          ],
        },
      ],
    });
    const tableCount = async () =>
      Number((await pgQuery<{ n: string }>(`SELECT count(*) AS n FROM ${SCHEMA}.contacts`))[0]!.n);
    const before = { rows: h.emulator.state.rows(sheets.contacts!.id).length, table: await tableCount() };

    const mixed = await run('contacts');
    // The new records, and the linked records holding their keys (both sides of each link).
    expect(mixed.report.readWhole).toEqual({ source: 4, worksheet: 3 });
    expect(mixed.report.counts.ambiguous).toBe(2);
    const conflicts = await h.rt.redis.hkeys(`${h.rt.statePrefix}:twoway:contacts:conflicts`);
    expect(conflicts.sort()).toEqual(['ambiguous:t12@x.test', 'ambiguous:t13@x.test']);
    const emails = h.emulator.state.rows(sheets.contacts!.id).map((r) => r.text.email);
    expect(emails.filter((e) => e === 't12@x.test')).toHaveLength(1);
    expect(emails.filter((e) => e === 'fresh@x.test')).toHaveLength(1);
    expect(h.emulator.state.rows(sheets.contacts!.id).length).toBe(before.rows + 1);
    const table = await pgQuery<{ email: string }>(`SELECT email FROM ${SCHEMA}.contacts`);
    expect(table.filter((r) => r.email === 't13@x.test')).toHaveLength(1);
    expect(await tableCount()).toBe(before.table);
    expect(mixed.writes).toEqual({ table: 0, sheet: 1 });
  });
});
