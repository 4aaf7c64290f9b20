/**
 * Change cursors are capped on the clock that stamps the changes, not this machine's:
 * the platform's for `_updatedAt` (the `Date` of its answers), the database's for a
 * table's `updatedAtColumn`, and the start of a writing transaction still open.
 *
 * The emulator's clock runs 90 s behind this machine's (beyond the 5 s margin, and the
 * 60 s the worksheet source had). A cap on the local clock then lies 85 s ahead of every
 * `_updatedAt` the platform stamps while a run reads: an edit the reads missed gets a time
 * below it and no later run reads it. Each test edits while a run reads (the emulator's
 * `beforeHandle` holds the run's request while the test edits) so that the run sees a
 * later edit but not an earlier one, and checks the next run brings the earlier one over.
 * The PostgreSQL test holds a transaction open across a run: its row carries the
 * transaction's start (`now()` by trigger), older than the run's reads.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import type { EmulatorRequest } from '../../src/emulator/options.ts';
import { twoWayReportKey } from '../../src/queue/two-way-job.ts';
import { checkTableClock } from '../../src/sync/check/check-table-clock.ts';
import { loadJobSpec } from '../../src/sync/job-spec/load-job-spec.ts';
import { pgQuery, PG_URL } from '../helpers/pg.ts';
import { PAST_MARGIN_MS, SHORT_MARGIN } from '../helpers/cursor-margin.ts';
import { createHarness, type Harness } from '../helpers/sync-harness.ts';

const SCHEMA = `curclk_${process.pid}`;
/** How far the platform's clock is behind this machine's. */
const PLATFORM_BEHIND_MS = 90_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let h: Harness;
let client: PlatformClient;
/** Awaited before the emulator handles each request, when set. */
let hold: ((request: EmulatorRequest) => Promise<void>) | undefined;
const sheets: Record<string, string> = {};

const rowOf = (sheet: string, field: string, value: string) =>
  h.emulator.state.rows(sheets[sheet]!).find((r) => r.values[field] === value);
const tableRow = async (table: string, email: string) =>
  (
    await pgQuery<{ full_name: string; note: string | null }>([
      `SELECT full_name, note FROM ${SCHEMA}.${table} WHERE email = $1`,
      [email],
    ])
  )[0];
async function run(job: string) {
  const { record } = await h.runJob(job);
  expect(record.status, record.message).toBe('completed');
  return record;
}

beforeAll(async () => {
  h = await createHarness(
    'cursor-clocks',
    { now: () => Date.now() - PLATFORM_BEHIND_MS, beforeHandle: (request) => hold?.(request) },
    { CURCLK_DB: PG_URL, ...SHORT_MARGIN },
  );
  client = h.rt.clientFor();
  await pgQuery(
    `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`,
    `CREATE SCHEMA ${SCHEMA}`,
    `CREATE FUNCTION ${SCHEMA}.touch() RETURNS trigger AS $$ BEGIN NEW.updated_at := now(); RETURN NEW; END $$ LANGUAGE plpgsql`,
    ...['people', 'accounts'].flatMap((t) => [
      `CREATE TABLE ${SCHEMA}.${t} (id serial PRIMARY KEY, email text, full_name text, note text,
         updated_at timestamptz NOT NULL DEFAULT now())`,
      `CREATE TRIGGER touch BEFORE UPDATE ON ${SCHEMA}.${t} FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.touch()`,
      `INSERT INTO ${SCHEMA}.${t} (email, full_name, note) VALUES
         ('a@x.test', 'A', 'n'), ('y@x.test', 'Y', 'n'), ('z@x.test', 'Z', 'n')`,
    ]),
  );
  const person = [
    { name: 'Email', alias: 'email', type: 'Text' },
    { name: 'Name', alias: 'name', type: 'Text' },
    { name: 'Note', alias: 'note', type: 'Text' },
  ];
  for (const t of ['people', 'accounts']) {
    sheets[t] = h.createWorksheet({ name: t, alias: t, fields: person });
    await h.writeJob(
      t,
      `name: ${t}
source: { type: postgres, urlEnv: CURCLK_DB, table: ${SCHEMA}.${t}, keyColumn: id, updatedAtColumn: updated_at, allowPrivilegedSource: true }
target: { worksheet: ${t}, mode: two-way, key: email, conflict: newest }
fields: { email: email, name: full_name, note: note }
`,
    );
  }
  const order = [
    { name: 'Code', alias: 'code', type: 'Text', required: true, isTitle: true },
    { name: 'Status', alias: 'status', type: 'Text' },
  ];
  sheets.orders = h.createWorksheet({ name: 'Orders', alias: 'orders', fields: order });
  sheets.copies = h.createWorksheet({ name: 'Copies', alias: 'copies', fields: order });
  await h.writeJob(
    'copy',
    `name: copy
source: { type: worksheet, worksheet: orders }
target: { worksheet: copies, mode: upsert, key: code }
fields: { code: code, status: status }
incremental: { cursor: _updatedAt }
`,
  );
}, 120_000);

afterAll(async () => {
  hold = undefined;
  await h?.close();
  await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`, `DROP ROLE IF EXISTS ${SCHEMA}`);
});

describe("change cursors are capped on the stamping clock, not this machine's", { timeout: 240_000 }, () => {
  it("two-way: a worksheet edit the run's reads missed is synced by the next run, the platform's clock 90 s behind", async () => {
    await run('people');
    await sleep(PAST_MARGIN_MS);
    await run('people');
    // z changes in the table: the next run reads its worksheet row by id, after the
    // changed rows. While that request is held, y is edited (too late for the changed
    // rows), then z a second later: the run sees z's edit, the later one, and not y's.
    await pgQuery(`UPDATE ${SCHEMA}.people SET full_name = 'Z table' WHERE email = 'z@x.test'`);
    let fired = false;
    hold = async (request) => {
      if (fired || !request.path.endsWith(`${sheets.people}/rows/list`)) return;
      const filter = (request.body as { filter?: unknown } | undefined)?.filter;
      if (!JSON.stringify(filter ?? null).includes('"rowid"')) return;
      fired = true;
      await client.rows.update(sheets.people!, rowOf('people', 'email', 'y@x.test')!.id, {
        fields: [{ id: 'name', value: 'Y sheet' }],
      });
      await sleep(1_100);
      await client.rows.update(sheets.people!, rowOf('people', 'email', 'z@x.test')!.id, {
        fields: [{ id: 'note', value: 'z sheet' }],
      });
    };
    await run('people');
    hold = undefined;
    expect(fired).toBe(true);
    expect(await tableRow('people', 'z@x.test')).toEqual({ full_name: 'Z table', note: 'z sheet' });
    expect((await tableRow('people', 'y@x.test'))?.full_name).toBe('Y');

    await run('people');
    expect((await tableRow('people', 'y@x.test'))?.full_name).toBe('Y sheet');
  });

  it("worksheet source (upsert): a row edited during the scan is read by the next run, the platform's clock 90 s behind", async () => {
    const code = (i: number) => `C-${String(i).padStart(4, '0')}`;
    const made = await client.rows.batchCreate(sheets.orders!, {
      rows: Array.from({ length: 1000 }, (_, i) => ({
        fields: [
          { id: 'code', value: code(i + 1) },
          { id: 'status', value: 'new' },
        ],
      })),
    });
    // A second later: created last, it sorts onto page 2 of the reader's pages of 1000.
    await sleep(1_100);
    const last = await client.rows.batchCreate(sheets.orders!, {
      rows: [
        {
          fields: [
            { id: 'code', value: code(1001) },
            { id: 'status', value: 'new' },
          ],
        },
      ],
    });
    let fired = false;
    hold = async (request) => {
      const page = (request.body as { pageIndex?: unknown } | undefined)?.pageIndex;
      if (fired || !request.path.endsWith(`${sheets.orders}/rows/list`) || page !== 2) return;
      fired = true;
      await client.rows.batchUpdate(sheets.orders!, {
        rowIds: [made.rowIds[0]!],
        fields: [{ id: 'status', value: 'edited' }],
      });
      await sleep(1_100);
      await client.rows.batchUpdate(sheets.orders!, {
        rowIds: [last.rowIds[0]!],
        fields: [{ id: 'status', value: 'edited' }],
      });
    };
    await run('copy');
    hold = undefined;
    expect(fired).toBe(true);
    // Page 1 was read before the edits, page 2 after: only the last row's edit landed.
    expect(rowOf('copies', 'code', code(1001))?.values.status).toBe('edited');
    expect(rowOf('copies', 'code', code(1))?.values.status).toBe('new');

    await run('copy');
    expect(rowOf('copies', 'code', code(1))?.values.status).toBe('edited');
  });

  it('two-way on PostgreSQL: a transaction open across a run, its row stamped at its start, is synced by the next run', async () => {
    await run('accounts');
    await sleep(PAST_MARGIN_MS);
    await run('accounts');
    const tx = new pg.Client({ connectionString: PG_URL });
    await tx.connect();
    try {
      await tx.query('BEGIN');
      await tx.query(`UPDATE ${SCHEMA}.accounts SET full_name = 'Y in tx' WHERE email = 'y@x.test'`);
      // y's updated_at is the transaction's start; past the margin, and then a later edit
      // committed, which the run reads: on the clocks alone its cursor passes y's time.
      await sleep(PAST_MARGIN_MS + 1_000);
      await pgQuery(`UPDATE ${SCHEMA}.accounts SET full_name = 'Z later' WHERE email = 'z@x.test'`);
      await run('accounts');
      expect(rowOf('accounts', 'email', 'z@x.test')?.values.name).toBe('Z later');
      expect(rowOf('accounts', 'email', 'y@x.test')?.values.name).toBe('Y');
      await tx.query('COMMIT');
    } finally {
      await tx.end();
    }
    await run('accounts');
    expect(rowOf('accounts', 'email', 'y@x.test')?.values.name).toBe('Y in tx');
  });

  it('two-way on PostgreSQL: a transaction open on another table does not hold the cursor back', async () => {
    await pgQuery(`CREATE TABLE IF NOT EXISTS ${SCHEMA}.elsewhere (n int)`);
    await sleep(PAST_MARGIN_MS);
    await run('accounts');
    const tx = new pg.Client({ connectionString: PG_URL });
    await tx.connect();
    try {
      await tx.query('BEGIN');
      await tx.query(`INSERT INTO ${SCHEMA}.elsewhere VALUES (1)`);
      await sleep(1_100);
      await pgQuery(`UPDATE ${SCHEMA}.accounts SET full_name = 'Z again' WHERE email = 'z@x.test'`);
      await sleep(PAST_MARGIN_MS);
      await run('accounts');
      expect(rowOf('accounts', 'email', 'z@x.test')?.values.name).toBe('Z again');
      // The next run reads back its own worksheet write; the one after reads nothing: z's
      // time is behind its cursor although the other transaction started before it.
      await sleep(PAST_MARGIN_MS);
      await run('accounts');
      await sleep(PAST_MARGIN_MS);
      const quiet = await run('accounts');
      const report = JSON.parse((await h.rt.redis.get(twoWayReportKey(h.rt.statePrefix, quiet.runId)))!) as {
        readWhole: unknown;
      };
      expect(report.readWhole).toEqual({ source: 0, worksheet: 0 });
      await tx.query('COMMIT');
    } finally {
      await tx.end();
    }
  });

  it("check warns when the table's login cannot see other logins' transactions", async () => {
    const spec = await loadJobSpec(`${h.dir}/accounts.yaml`);
    const [seen] = await checkTableClock(spec, { CURCLK_DB: PG_URL });
    expect(seen).toMatchObject({ name: 'table transactions', ok: true });
    expect(seen!.detail).not.toMatch(/warning/);
    // A login of its own, without pg_read_all_stats (trust authentication on these machines).
    await pgQuery(`DROP ROLE IF EXISTS ${SCHEMA}`, `CREATE ROLE ${SCHEMA} LOGIN`);
    const url = new URL(PG_URL);
    url.username = SCHEMA;
    const [unseen] = await checkTableClock(spec, { CURCLK_DB: url.toString() });
    expect(unseen).toMatchObject({ name: 'table transactions', ok: true });
    expect(unseen!.detail).toMatch(/^warning: .*GRANT pg_read_all_stats/);
  });
});
