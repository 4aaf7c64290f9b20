/**
 * A Relation field in a two-way job (issue 25, "relations by key"), from the CLI: the
 * table column holds the related record's key (the related worksheet's `code`), the
 * worksheet holds a link to that row. Both sides are compared by the key, so a quiet run
 * writes nothing; an edit on either side reaches the other; a key no related row holds is
 * a dead letter naming it, and nothing else is written for it. Attachments stay refused.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { pgQuery, PG_URL } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const SCHEMA = `twrel_${process.pid}`;
const TABLE = `${SCHEMA}.orders`;
const JOB = (extra = '') => `name: orders
source: { type: postgres, urlEnv: TWREL_DB, table: ${TABLE}, keyColumn: id, allowPrivilegedSource: true }
target: { worksheet: orders, mode: two-way, key: ref, conflict: source }
fields:
  ref: ref
  customer: { from: customer, relationKey: code }
${extra}`;

let h: Harness;
let customers: WorksheetStructure;
let orders: WorksheetStructure;
let client: PlatformClient;
const customerRow = new Map<string, string>();
const children: ChildProcess[] = [];

const cli = (...args: string[]) => spawnCli(h, children, args).exited;
/** `run orders`; `expected` 2 when the run dead-letters (the CLI's contract). */
async function run(expected = 0): Promise<string> {
  const done = await cli('run', 'orders');
  expect(done.code, done.stderr).toBe(expected);
  return done.stdout;
}
const sheetWrites = () =>
  h.emulator.requests.filter(
    (r) =>
      r.method !== 'GET' &&
      r.path.includes(orders.id) &&
      /\/rows(\/|$)/.test(r.path) &&
      !r.path.endsWith('/list'),
  ).length;
const tableWrites = async () =>
  Number((await pgQuery<{ n: string }>(`SELECT n FROM ${SCHEMA}.writes`))[0]!.n);
const counts = async () => ({ sheet: sheetWrites(), table: await tableWrites() });
/** Each order's related row ids, by its ref. */
const linked = () =>
  new Map(h.emulator.state.rows(orders.id).map((r) => [r.text.ref ?? '', r.values.customer ?? []]));
const tableCustomers = async () =>
  new Map(
    (await pgQuery<{ ref: string; customer: string | null }>(`SELECT ref, customer FROM ${TABLE}`)).map(
      (r) => [r.ref, r.customer],
    ),
  );

beforeAll(async () => {
  h = await createHarness('two-way-rel', { requestLogLimit: 1_000_000 }, { TWREL_DB: PG_URL });
  await pgQuery(
    `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`,
    `CREATE SCHEMA ${SCHEMA}`,
    `CREATE TABLE ${TABLE} (id serial PRIMARY KEY, ref text, customer text)`,
    `CREATE TABLE ${SCHEMA}.writes (n bigint NOT NULL)`,
    `INSERT INTO ${SCHEMA}.writes VALUES (0)`,
    `CREATE FUNCTION ${SCHEMA}.count_write() RETURNS trigger AS $$ BEGIN
       UPDATE ${SCHEMA}.writes SET n = n + 1; RETURN NULL; END $$ LANGUAGE plpgsql`,
    `CREATE TRIGGER counted AFTER INSERT OR UPDATE OR DELETE ON ${TABLE} FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.count_write()`,
    `INSERT INTO ${TABLE} (ref, customer) VALUES ('O1', 'ACME'), ('O2', 'BETA'), ('O3', NULL)`,
  );
  customers = h.emulator.createWorksheet(h.appId, {
    name: 'Customers',
    alias: 'customers',
    fields: [
      { name: 'Code', alias: 'code', type: 'Text' },
      { name: 'Name', alias: 'name', type: 'Text' },
    ],
  });
  orders = h.emulator.createWorksheet(h.appId, {
    name: 'Orders',
    alias: 'orders',
    fields: [
      { name: 'Ref', alias: 'ref', type: 'Text' },
      { name: 'Customer', alias: 'customer', type: 'Relation', dataSource: customers.id, subType: 1 },
      { name: 'Contract', alias: 'contract', type: 'Attachment' },
    ],
  });
  client = h.rt.clientFor();
  const { rowIds } = await client.rows.batchCreate(customers.id, {
    rows: ['ACME', 'BETA', 'GAMMA'].map((code) => ({
      fields: [
        { id: 'code', value: code },
        // The title differs from the key: the sync must compare by key, not by title.
        { id: 'name', value: `${code} Ltd` },
      ],
    })),
  });
  ['ACME', 'BETA', 'GAMMA'].forEach((code, i) => customerRow.set(code, rowIds[i]!));
  await client.rows.batchCreate(orders.id, {
    rows: [
      {
        fields: [
          { id: 'ref', value: 'O4' },
          { id: 'customer', value: [customerRow.get('GAMMA')] },
        ],
      },
    ],
  });
  await h.writeJob('orders', JOB());
}, 60_000);

afterEach(() => killChildren(children));
afterAll(async () => {
  killChildren(children);
  await h?.close();
  await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
});

describe('two-way relation fields, by key (issue 25)', { timeout: 180_000 }, () => {
  it('the first run links by key both ways; runs after it write nothing', async () => {
    await run();
    const rel = linked();
    expect(rel.get('O1')).toEqual([customerRow.get('ACME')]);
    expect(rel.get('O2')).toEqual([customerRow.get('BETA')]);
    expect(rel.get('O3')).toEqual([]);
    expect((await tableCustomers()).get('O4')).toBe('GAMMA');
    const before = await counts();
    await run();
    await run();
    expect(await counts()).toEqual(before);
  });

  it('a key edited in the table re-links the row; a link edited in the worksheet sets the key', async () => {
    await pgQuery(`UPDATE ${TABLE} SET customer = 'GAMMA' WHERE ref = 'O1'`);
    const o2 = h.emulator.state.rows(orders.id).find((r) => r.text.ref === 'O2')!;
    await client.rows.update(orders.id, o2.id, {
      fields: [{ id: 'customer', value: [customerRow.get('ACME')] }],
    });
    const before = await counts();
    await run();
    expect(await counts()).toEqual({ sheet: before.sheet + 1, table: before.table + 1 });
    expect(linked().get('O1')).toEqual([customerRow.get('GAMMA')]);
    expect((await tableCustomers()).get('O2')).toBe('ACME');
    const after = await counts();
    await run();
    expect(await counts()).toEqual(after);
  });

  it('a key no related row holds is a dead letter naming it; fixed, it syncs and leaves the list', async () => {
    await pgQuery(`UPDATE ${TABLE} SET customer = 'NOPE' WHERE ref = 'O3'`);
    const before = await counts();
    const out = await run(2);
    expect(out).toMatch(/dead-lettered 1/);
    expect(await counts()).toEqual(before);
    expect(linked().get('O3')).toEqual([]);
    const dlq = await cli('dlq', 'list', '--job', 'orders', '--json');
    expect(dlq.code, dlq.stderr).toBe(0);
    const [entry] = JSON.parse(dlq.stdout) as Array<{ message: string; field: string; category: string }>;
    expect(entry).toMatchObject({ field: 'customer', category: 'invalid-row' });
    expect(entry!.message).toContain(`no row in related worksheet ${customers.id} with code = "NOPE"`);
    // Still refused at the next run: one dead letter, not one per run.
    await run(2);
    const again = await cli('dlq', 'list', '--job', 'orders', '--json');
    expect(JSON.parse(again.stdout) as unknown[]).toHaveLength(1);

    await pgQuery(`UPDATE ${TABLE} SET customer = 'BETA' WHERE ref = 'O3'`);
    await run();
    expect(linked().get('O3')).toEqual([customerRow.get('BETA')]);
    const gone = await cli('dlq', 'list', '--job', 'orders', '--json');
    expect(JSON.parse(gone.stdout) as unknown[]).toHaveLength(0);
  });

  it('an attachment field is refused, naming the job file and the field', async () => {
    await h.writeJob('orders', JOB('  contract: contract_url\n'));
    const done = await cli('run', 'orders');
    expect(done.code).not.toBe(0);
    expect(done.stderr).toMatch(/orders\.yaml: these fields cannot be synced two-way/);
    expect(done.stderr).toContain('fields.contract: Attachment field Contract is not synced two-way');
    await h.writeJob('orders', JOB());
  });
});
