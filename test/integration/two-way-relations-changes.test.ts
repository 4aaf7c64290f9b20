/**
 * Two-way jobs with Relation fields read what changed since the last run (issue 25,
 * "relations by key"), against the emulator and a real PostgreSQL table: a relation read
 * by filter or in a key scan comes out as the related rows' keys, as a whole read does.
 * - `orders`: a relation beside the key; `lines`: a relation inside the key
 *   (`key: [customer, ref]`, the same ref under two customers).
 * - Settled, a run reads no record whole, writes nothing on either side, and makes a few
 *   list requests (a related row is asked by id only when a key scan needs its key).
 * - A relation edited on either side reaches the other side at the next run.
 * - New records whose key holds a relation match by the related row's key: a pair on both
 *   sides is linked, not created twice; a new record with the key of a linked record left
 *   out of the plan is ambiguous, created nowhere.
 * - A related row's key edited is not an edit of the rows linking to it: a quiet run writes
 *   nothing; the new key reaches the table when such a row is next read whole.
 * - `plan` counts the relation lookups in its API cost: exactly those a run then makes.
 * Writes are counted on both sides: the table with a trigger, the worksheet by the
 * emulator's request log.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { twoWayReportKey } from '../../src/queue/two-way-job.ts';
import type { TwoWayReport } from '../../src/sync/two-way/two-way-run.ts';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { pgQuery, PG_URL } from '../helpers/pg.ts';
import { PAST_MARGIN_MS, SHORT_MARGIN } from '../helpers/cursor-margin.ts';
import { createHarness, type Harness } from '../helpers/sync-harness.ts';

const SCHEMA = `twrelc_${process.pid}`;
const children: ChildProcess[] = [];
let h: Harness;
let client: PlatformClient;
let customers: WorksheetStructure;
const sheets: Record<'orders' | 'lines', WorksheetStructure> = {} as never;
const customerRow = new Map<string, string>();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const tableWrites = async () =>
  Number((await pgQuery<{ n: string }>(`SELECT n FROM ${SCHEMA}.writes`))[0]!.n);
const sheetWrites = () =>
  h.emulator.requests.filter(
    (r) => r.method !== 'GET' && /\/rows(\/|$)/.test(r.path) && !r.path.endsWith('/list'),
  ).length;
/** Rows of a job's worksheet by `ref` (and customer row id for `lines`). */
const rowsOf = (job: 'orders' | 'lines') => h.emulator.state.rows(sheets[job].id);
const order = (ref: string) => rowsOf('orders').find((r) => r.text.ref === ref)!;
const tableOrders = async () =>
  new Map(
    (
      await pgQuery<{ ref: string; customer: string | null; note: string | null }>(
        `SELECT ref, customer, note FROM ${SCHEMA}.orders`,
      )
    ).map((r) => [r.ref, r]),
  );
const lineKeys = (rows: ReadonlyArray<{ values: Record<string, unknown>; text: Record<string, string> }>) =>
  rows
    .map((r) => {
      const [id] = (r.values.customer ?? []) as string[];
      const code = [...customerRow].find(([, rowId]) => rowId === id)?.[0] ?? '';
      return `${code}/${r.text.ref ?? ''}`;
    })
    .sort();

/** Runs the job; answers its report, the requests it made by kind and the writes on each side. */
async function run(job: 'orders' | 'lines') {
  const before = { requests: h.emulator.requests.length, table: await tableWrites(), sheet: sheetWrites() };
  const { record } = await h.runJob(job);
  expect(record.status, record.message).toBe('completed');
  const report = JSON.parse(
    (await h.rt.redis.get(twoWayReportKey(h.rt.statePrefix, record.runId)))!,
  ) as TwoWayReport;
  const made = h.emulator.requests.slice(before.requests);
  return {
    report,
    /** List requests of the job's worksheet. */
    lists: made.filter((r) => r.path.includes(sheets[job].id) && r.path.endsWith('/rows/list')).length,
    /** Requests to the related worksheet (its structure, its rows by id or key). */
    lookups: made.filter((r) => r.path.includes(customers.id)).length,
    writes: { table: (await tableWrites()) - before.table, sheet: sheetWrites() - before.sheet },
  };
}
/** Runs until settled: the first run, then one reading back its own writes (the cursor margin is 5 s). */
async function settle(job: 'orders' | 'lines') {
  await run(job);
  await sleep(PAST_MARGIN_MS);
  expect((await run(job)).writes).toEqual({ table: 0, sheet: 0 });
  await sleep(PAST_MARGIN_MS);
}

beforeAll(async () => {
  h = await createHarness(
    'two-way-rel-changes',
    { requestLogLimit: 1_000_000 },
    { TWRC_DB: PG_URL, ...SHORT_MARGIN },
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
    `CREATE TABLE ${SCHEMA}.orders (id serial PRIMARY KEY, ref text, customer text, note text,
       updated_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TABLE ${SCHEMA}.lines (id serial PRIMARY KEY, customer text, ref text, qty text,
       updated_at timestamptz NOT NULL DEFAULT now())`,
    `INSERT INTO ${SCHEMA}.orders (ref, customer, note) VALUES
       ('O1', 'ACME', 'n'), ('O2', 'BETA', 'n'), ('O3', NULL, 'n'), ('O4', 'GAMMA', 'n')`,
    `INSERT INTO ${SCHEMA}.lines (customer, ref, qty) VALUES
       ('ACME', 'L1', '1'), ('BETA', 'L1', '2'), ('ACME', 'L2', '3'), ('GAMMA', 'L1', '4')`,
  );
  for (const t of ['orders', 'lines'])
    await pgQuery(
      `CREATE TRIGGER touch BEFORE UPDATE ON ${SCHEMA}.${t} FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.touch()`,
      `CREATE TRIGGER counted AFTER INSERT OR UPDATE OR DELETE ON ${SCHEMA}.${t} FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.count_write()`,
    );
  customers = h.emulator.createWorksheet(h.appId, {
    name: 'Customers',
    alias: 'customers',
    fields: [
      { name: 'Code', alias: 'code', type: 'Text' },
      // The title (a relation cell's `name`) differs from the key: relations compare by key.
      { name: 'Name', alias: 'name', type: 'Text', isTitle: true },
    ],
  });
  const codes = ['ACME', 'BETA', 'GAMMA', 'DELTA'];
  const { rowIds } = await client.rows.batchCreate(customers.id, {
    rows: codes.map((code) => ({
      fields: [
        { id: 'code', value: code },
        { id: 'name', value: `${code} Ltd` },
      ],
    })),
  });
  codes.forEach((code, i) => customerRow.set(code, rowIds[i]!));
  const relation = {
    name: 'Customer',
    alias: 'customer',
    type: 'Relation',
    dataSource: customers.id,
    subType: 1,
  } as const;
  sheets.orders = h.emulator.createWorksheet(h.appId, {
    name: 'Orders',
    alias: 'orders',
    fields: [
      { name: 'Ref', alias: 'ref', type: 'Text' },
      relation,
      { name: 'Note', alias: 'note', type: 'Text' },
    ],
  });
  sheets.lines = h.emulator.createWorksheet(h.appId, {
    name: 'Lines',
    alias: 'lines',
    fields: [
      relation,
      { name: 'Ref', alias: 'ref', type: 'Text' },
      { name: 'Qty', alias: 'qty', type: 'Text' },
    ],
  });
  const rel = (code: string) => ({ id: 'customer', value: [customerRow.get(code)] });
  await client.rows.batchCreate(sheets.orders.id, {
    rows: [{ fields: [{ id: 'ref', value: 'O5' }, rel('DELTA'), { id: 'note', value: 'n' }] }],
  });
  // (ACME, L1) on both sides, (BETA, L2) and (DELTA, L1) on the worksheet only.
  await client.rows.batchCreate(sheets.lines.id, {
    rows: [
      ['ACME', 'L1', '1'],
      ['BETA', 'L2', '5'],
      ['DELTA', 'L1', '6'],
    ].map(([code, ref, qty]) => ({
      fields: [rel(code!), { id: 'ref', value: ref }, { id: 'qty', value: qty }],
    })),
  });
  const source = (table: string) =>
    `source: { type: postgres, urlEnv: TWRC_DB, table: ${SCHEMA}.${table}, keyColumn: id, updatedAtColumn: updated_at, allowPrivilegedSource: true }`;
  await h.writeJob(
    'orders',
    `name: orders
${source('orders')}
target: { worksheet: orders, mode: two-way, key: ref, conflict: newest }
fields:
  ref: ref
  customer: { from: customer, relationKey: code }
  note: note
`,
  );
  await h.writeJob(
    'lines',
    `name: lines
${source('lines')}
target: { worksheet: lines, mode: two-way, key: [customer, ref], conflict: newest }
fields:
  customer: { from: customer, relationKey: code }
  ref: ref
  qty: qty
`,
  );
}, 60_000);

afterEach(() => killChildren(children));
afterAll(async () => {
  killChildren(children);
  await h?.close();
  await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
});

describe('two-way jobs with relations read what changed (issue 25)', { timeout: 240_000 }, () => {
  it('settled, a job with a relation field reads no record whole, writes nothing, and makes 2 list requests', async () => {
    await settle('orders');
    const quiet = await run('orders');
    expect(quiet.report.reads).toBe('changes');
    expect(quiet.report.readWhole).toEqual({ source: 0, worksheet: 0 });
    expect(quiet.report.counts.linked).toBe(5);
    expect(quiet.writes).toEqual({ table: 0, sheet: 0 });
    // The key scan and the changed rows; no related row is asked (the relation is not a key).
    expect(quiet.lists).toBe(2);
    expect(quiet.lookups).toBe(0);
  });

  it('settled, a job with a relation in its key reads no record whole and asks the related rows by id once', async () => {
    await settle('lines');
    expect(lineKeys(rowsOf('lines'))).toEqual([
      'ACME/L1',
      'ACME/L2',
      'BETA/L1',
      'BETA/L2',
      'DELTA/L1',
      'GAMMA/L1',
    ]);
    const quiet = await run('lines');
    expect(quiet.report.reads).toBe('changes');
    expect(quiet.report.readWhole).toEqual({ source: 0, worksheet: 0 });
    expect(quiet.report.counts.linked).toBe(6);
    expect(quiet.writes).toEqual({ table: 0, sheet: 0 });
    expect(quiet.lists).toBe(2);
    // The key scan's related rows: the structure, then their keys by id in one request.
    expect(quiet.lookups).toBe(2);
  });

  it('a relation edited on either side reaches the other at the next run, reading only those records whole', async () => {
    await pgQuery(`UPDATE ${SCHEMA}.orders SET customer = 'GAMMA' WHERE ref = 'O1'`);
    await client.rows.update(sheets.orders.id, order('O2').id, {
      fields: [{ id: 'customer', value: [customerRow.get('ACME')] }],
    });
    const edited = await run('orders');
    expect(edited.report.reads).toBe('changes');
    expect(edited.report.readWhole).toEqual({ source: 2, worksheet: 2 });
    expect(edited.writes).toEqual({ table: 1, sheet: 1 });
    expect(order('O1').values.customer).toEqual([customerRow.get('GAMMA')]);
    expect((await tableOrders()).get('O2')?.customer).toBe('ACME');
    await sleep(PAST_MARGIN_MS);
    const back = await run('orders');
    expect(back.writes).toEqual({ table: 0, sheet: 0 });
  });

  it('new records with a relation in the key match by the related key: a pair is linked, a key of a quiet record is ambiguous', async () => {
    await sleep(PAST_MARGIN_MS);
    expect((await run('lines')).report.readWhole).toEqual({ source: 0, worksheet: 0 });
    const rel = (code: string) => ({ id: 'customer', value: [customerRow.get(code)] });
    // (GAMMA, L2) new on both sides; (DELTA, L2) new in the table only; (BETA, L1) new on
    // the worksheet, and held by a linked record left out of the plan.
    await pgQuery(
      `INSERT INTO ${SCHEMA}.lines (customer, ref, qty) VALUES ('GAMMA', 'L2', '7'), ('DELTA', 'L2', '8')`,
    );
    await client.rows.batchCreate(sheets.lines.id, {
      rows: [
        { fields: [rel('GAMMA'), { id: 'ref', value: 'L2' }, { id: 'qty', value: '7' }] },
        { fields: [rel('BETA'), { id: 'ref', value: 'L1' }, { id: 'qty', value: '9' }] },
      ],
    });
    const tableCount = async () =>
      Number((await pgQuery<{ n: string }>(`SELECT count(*) AS n FROM ${SCHEMA}.lines`))[0]!.n);

    const mixed = await run('lines');
    expect(mixed.report.counts.matched).toBe(1);
    expect(mixed.report.counts.ambiguous).toBe(1);
    const conflicts = await h.rt.redis.hkeys(`${h.rt.statePrefix}:twoway:lines:conflicts`);
    expect(conflicts).toEqual([`ambiguous:BETA\u001fL1`]);
    // Only (DELTA, L2) is created, in the worksheet; nothing in the table.
    expect(mixed.writes).toEqual({ table: 0, sheet: 1 });
    expect(await tableCount()).toBe(8);
    expect(lineKeys(rowsOf('lines'))).toEqual([
      'ACME/L1',
      'ACME/L2',
      'BETA/L1',
      'BETA/L1',
      'BETA/L2',
      'DELTA/L1',
      'DELTA/L2',
      'GAMMA/L1',
      'GAMMA/L2',
    ]);
  });

  it('plan counts the relation lookups of its reads and writes: those the run then makes', async () => {
    await sleep(PAST_MARGIN_MS);
    await run('orders');
    await sleep(PAST_MARGIN_MS);
    // Read: O2's new relation is read by filter (its related key asked by id); written: O3's
    // key DELTA is looked up in the related worksheet.
    await client.rows.update(sheets.orders.id, order('O2').id, {
      fields: [{ id: 'customer', value: [customerRow.get('BETA')] }],
    });
    await pgQuery(`UPDATE ${SCHEMA}.orders SET customer = 'DELTA' WHERE ref = 'O3'`);
    const before = h.emulator.requests.length;
    const plan = await spawnCli(h, children, ['plan', 'orders', '--json']).exited;
    expect(plan.code, plan.stderr).toBe(0);
    const planned = (JSON.parse(plan.stdout) as TwoWayReport).planned!;
    const made = h.emulator.requests.slice(before);
    const planLists = made.filter((r) => r.path.includes(sheets.orders.id) && r.path.endsWith('/rows/list'));
    // Reads: structure, the plan's list requests, and the lookups (2 read, 2 to write).
    expect(planned.apiCalls.relationLookups).toBe(4);
    expect(planned.apiCalls.reads).toBe(1 + planLists.length + 4);
    expect(planned.worksheet.update).toBe(1);
    expect(planned.source.update).toBe(1);

    const done = await run('orders');
    expect(done.lookups).toBe(planned.apiCalls.relationLookups);
    expect(done.writes).toEqual({ table: 1, sheet: 1 });
    expect(order('O3').values.customer).toEqual([customerRow.get('DELTA')]);
    expect((await tableOrders()).get('O2')?.customer).toBe('BETA');
  });

  it("a related row's key edited is not an edit of the rows linking to it; it reaches the table with their next edit", async () => {
    await sleep(PAST_MARGIN_MS);
    await run('orders');
    const rename = (from: string, to: string) =>
      client.rows.update(customers.id, customerRow.get(from)!, { fields: [{ id: 'code', value: to }] });
    await rename('GAMMA', 'GAMMA2');
    const quiet = await run('orders');
    expect(quiet.report.readWhole).toEqual({ source: 0, worksheet: 0 });
    expect(quiet.writes).toEqual({ table: 0, sheet: 0 });
    expect((await tableOrders()).get('O1')?.customer).toBe('GAMMA');

    // O1 (linked to that row) edited: read whole, its relation now reads GAMMA2.
    await client.rows.update(sheets.orders.id, order('O1').id, { fields: [{ id: 'note', value: 'edited' }] });
    const edited = await run('orders');
    expect(edited.writes).toEqual({ table: 1, sheet: 0 });
    expect((await tableOrders()).get('O1')).toMatchObject({ customer: 'GAMMA2', note: 'edited' });
    // O4, linked to it too and not edited, keeps the old key.
    expect((await tableOrders()).get('O4')?.customer).toBe('GAMMA');
  });

  it('a one-way plan counts the lookups of a relation mapped by key', async () => {
    const sheet = h.emulator.createWorksheet(h.appId, {
      name: 'Orders copy',
      alias: 'orders_copy',
      fields: [
        { name: 'Ref', alias: 'ref', type: 'Text' },
        { name: 'Customer', alias: 'customer', type: 'Relation', dataSource: customers.id, subType: 1 },
      ],
    });
    await h.writeJob(
      'copy',
      `name: copy
source: { type: postgres, urlEnv: TWRC_DB, table: ${SCHEMA}.orders, keyColumn: id, allowPrivilegedSource: true }
target: { worksheet: orders_copy, mode: upsert, key: ref }
fields:
  ref: ref
  customer: { from: customer, relationKey: code }
`,
    );
    const before = h.emulator.requests.length;
    const plan = await spawnCli(h, children, ['plan', 'copy', '--json']).exited;
    expect(plan.code, plan.stderr).toBe(0);
    const apiCalls = (JSON.parse(plan.stdout) as { apiCalls: { reads: number; lookups: number } }).apiCalls;
    const lookups = h.emulator.requests.slice(before).filter((r) => r.path.includes(customers.id)).length;
    // The related worksheet's structure, and one request for the 4 distinct keys the table holds.
    expect(lookups).toBe(2);
    expect(apiCalls.lookups).toBe(lookups);
    // The worksheet's keys (1 page), the structure, and the lookups.
    expect(apiCalls.reads).toBe(2 + lookups);
    expect(h.emulator.state.rows(sheet.id)).toHaveLength(0);
  });

  it("the key scan reads a relation in the key as its related row's key now: a new row under a renamed customer meets the linked one", async () => {
    await sleep(PAST_MARGIN_MS);
    await run('lines');
    // (DELTA, L1) is linked and quiet; its customer is renamed, then a second worksheet row
    // links that customer with ref L1: both read (DELTA2, L1), the table still says DELTA.
    await client.rows.update(customers.id, customerRow.get('DELTA')!, {
      fields: [{ id: 'code', value: 'DELTA2' }],
    });
    await client.rows.batchCreate(sheets.lines.id, {
      rows: [
        {
          fields: [
            { id: 'customer', value: [customerRow.get('DELTA')] },
            { id: 'ref', value: 'L1' },
            { id: 'qty', value: '10' },
          ],
        },
      ],
    });
    const tableRows = async () =>
      (await pgQuery<{ customer: string; ref: string }>(`SELECT customer, ref FROM ${SCHEMA}.lines`))
        .map((r) => `${r.customer}/${r.ref}`)
        .sort();
    const before = await tableRows();
    const found = await run('lines');
    // Met through the linked row's key as the key scan read it: ambiguous, not created.
    expect(found.report.counts.ambiguous).toBe(2);
    const conflicts = await h.rt.redis.hkeys(`${h.rt.statePrefix}:twoway:lines:conflicts`);
    expect(conflicts.sort()).toEqual([`ambiguous:BETA\u001fL1`, `ambiguous:DELTA2\u001fL1`]);
    // Nothing created; the linked row, read whole for it, carries the new key to the table.
    expect(found.writes).toEqual({ table: 1, sheet: 0 });
    expect(await tableRows()).toEqual(before.map((k) => (k === 'DELTA/L1' ? 'DELTA2/L1' : k)).sort());
  });
});
