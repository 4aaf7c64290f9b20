/**
 * The two-way commands as a user types them (issue 25): `run` a two-way job, then
 * `conflicts list|show|resolve`, `deletes list|approve|reject` and `links export`, each
 * checked by what lands in the worksheet (emulator) and in the PostgreSQL table.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { pgQuery, PG_URL } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const SCHEMA = `twcli_${process.pid}`;
const TABLE = `${SCHEMA}.people`;

let h: Harness;
let sheet: WorksheetStructure;
let client: PlatformClient;
const children: ChildProcess[] = [];

const cli = (...args: string[]) => spawnCli(h, children, args).exited;
async function run(): Promise<void> {
  const done = await cli('run', 'people');
  expect(done.code, done.stderr).toBe(0);
}
const rowsByEmail = () => new Map(h.emulator.state.rows(sheet.id).map((r) => [r.text.email ?? '', r]));
const tableByEmail = async () =>
  new Map(
    (
      await pgQuery<{ id: number; email: string; full_name: string | null; note: string | null }>(
        `SELECT id, email, full_name, note FROM ${TABLE}`,
      )
    ).map((r) => [r.email, r]),
  );
const editRow = (email: string, fields: Array<{ id: string; value: unknown }>) =>
  client.rows.update(sheet.id, rowsByEmail().get(email)!.id, { fields });

beforeAll(async () => {
  h = await createHarness('two-way-cli', {}, { TWCLI_DB: PG_URL });
  await pgQuery(
    `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`,
    `CREATE SCHEMA ${SCHEMA}`,
    `CREATE TABLE ${TABLE} (id serial PRIMARY KEY, email text, full_name text, note text,
       updated_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE FUNCTION ${SCHEMA}.touch() RETURNS trigger AS $$ BEGIN NEW.updated_at := now(); RETURN NEW; END $$ LANGUAGE plpgsql`,
    `CREATE TRIGGER touch BEFORE UPDATE ON ${TABLE} FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.touch()`,
    `INSERT INTO ${TABLE} (email, full_name, note)
       SELECT 'p' || i || '@x.test', 'Person ' || i, 'note ' || i FROM generate_series(1, 20) i`,
  );
  sheet = h.emulator.createWorksheet(h.appId, {
    name: 'People',
    alias: 'people',
    fields: [
      { name: 'Email', alias: 'email', type: 'Text' },
      { name: 'Name', alias: 'name', type: 'Text' },
      { name: 'Note', alias: 'note', type: 'Text' },
    ],
  });
  client = h.rt.clientFor();
  await h.writeJob(
    'people',
    `name: people
source: { type: postgres, urlEnv: TWCLI_DB, table: ${TABLE}, keyColumn: id, updatedAtColumn: updated_at, allowPrivilegedSource: true }
target: { worksheet: people, mode: two-way, key: email, conflict: source }
fields:
  email: email
  name: full_name
  note: { from: note, conflict: manual }
`,
  );
  await run();
  expect(h.emulator.state.rows(sheet.id)).toHaveLength(20);
}, 60_000);

afterEach(() => killChildren(children));
afterAll(async () => {
  killChildren(children);
  await h?.close();
  await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
});

describe('two-way commands (issue 25)', { timeout: 120_000 }, () => {
  it('conflicts list, show (both values, both times, the last synced value) and resolve, written at the next run', async () => {
    await editRow('p3@x.test', [{ id: 'note', value: 'sheet says 3' }]);
    await pgQuery(`UPDATE ${TABLE} SET note = 'table says 3' WHERE email = 'p3@x.test'`);
    await editRow('p4@x.test', [{ id: 'note', value: 'sheet says 4' }]);
    await pgQuery(`UPDATE ${TABLE} SET note = 'table says 4' WHERE email = 'p4@x.test'`);
    await run();
    const table = await tableByEmail();
    const id3 = `people/fields:${table.get('p3@x.test')!.id}`;
    const id4 = `people/fields:${table.get('p4@x.test')!.id}`;

    const list = await cli('conflicts', 'list', 'people');
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(`${id3}  key "p3@x.test"  fields note`);
    expect(list.stdout).toContain(id4);
    const everyJob = await cli('conflicts', 'list');
    expect(everyJob.stdout).toContain(id3);

    const show = await cli('conflicts', 'show', id3);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/worksheet {4}"sheet says 3"/);
    expect(show.stdout).toMatch(/table {8}"table says 3"/);
    expect(show.stdout).toMatch(/last synced {2}"note 3"/);
    expect(show.stdout).toMatch(/worksheet changed it at {2}\d{4}-\d\d-\d\dT/);
    expect(show.stdout).toMatch(/table changed it at {6}\d{4}-\d\d-\d\dT/);

    expect((await cli('conflicts', 'resolve', id3)).code).toBe(64);
    expect((await cli('conflicts', 'resolve', 'people/fields:999999', '--take', 'source')).code).toBe(1);
    expect((await cli('conflicts', 'frobnicate')).code).toBe(64);
    const r3 = await cli('conflicts', 'resolve', id3, '--take', 'agreed 3');
    expect(r3.code, r3.stderr).toBe(0);
    const r4 = await cli('conflicts', 'resolve', id4, '--take', 'worksheet');
    expect(r4.code, r4.stderr).toBe(0);
    // Stored, not yet written.
    expect((await tableByEmail()).get('p3@x.test')?.note).toBe('table says 3');

    await run();
    const after = await tableByEmail();
    const rows = rowsByEmail();
    expect(after.get('p3@x.test')?.note).toBe('agreed 3');
    expect(rows.get('p3@x.test')?.text.note).toBe('agreed 3');
    expect(after.get('p4@x.test')?.note).toBe('sheet says 4');
    expect(rows.get('p4@x.test')?.text.note).toBe('sheet says 4');
    expect((await cli('conflicts', 'list', 'people')).stdout.trim()).toBe('no conflicts in job people');
  });

  it('a delete of 30% of the table waits as pending; reject keeps one, approve lands the rest', async () => {
    const gone = await pgQuery<{ id: number; email: string }>(
      `DELETE FROM ${TABLE} WHERE id IN (SELECT id FROM ${TABLE} ORDER BY id DESC LIMIT 6) RETURNING id, email`,
    );
    await run();
    expect(h.emulator.state.rows(sheet.id)).toHaveLength(20);
    const list = await cli('deletes', 'list', 'people');
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain('6 pending delete(s) of job people: 6 in the worksheet, 0 in the table');
    const kept = gone[0]!;
    const keptRow = rowsByEmail().get(kept.email)!.id;
    expect(list.stdout).toContain(`worksheet:${keptRow}  delete worksheet row ${keptRow}`);

    expect((await cli('deletes', 'approve', 'people', 'worksheet:nope')).code).toBe(1);
    expect((await cli('deletes', 'approve')).code).toBe(64);
    const reject = await cli('deletes', 'reject', 'people', `worksheet:${keptRow}`);
    expect(reject.code, reject.stderr).toBe(0);
    const approve = await cli('deletes', 'approve', 'people');
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stdout).toContain('5 delete(s) of job people approved');
    await run();

    const rows = rowsByEmail();
    const table = await tableByEmail();
    for (const { email } of gone.slice(1)) expect(rows.has(email)).toBe(false);
    expect(rows.has(kept.email)).toBe(true);
    expect(table.get(kept.email)?.full_name).toBe(rows.get(kept.email)?.text.name);
    expect(h.emulator.state.rows(sheet.id)).toHaveLength(15);
    expect(table.size).toBe(15);
    expect((await cli('deletes', 'list', 'people')).stdout.trim()).toBe('job people has no pending deletes');
  });

  it('links export --csv: one line per linked record, the table key beside its row id', async () => {
    const out = await cli('links', 'export', 'people', '--csv');
    expect(out.code, out.stderr).toBe(0);
    const [header, ...lines] = out.stdout.trim().split('\n');
    expect(header).toBe('table_key,row_id,state');
    const table = await tableByEmail();
    const rows = rowsByEmail();
    const expected = [...table.values()]
      .sort((a, b) => a.id - b.id)
      .map((r) => `${r.id},${rows.get(r.email)!.id},linked`);
    expect(lines).toEqual(expected);
  });
});
