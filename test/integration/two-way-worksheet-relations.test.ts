/**
 * Worksheet ↔ worksheet of two apps with a Relation field on both (issue 25): each app's
 * relation points at its own Customers worksheet, whose rows have other ids in each app,
 * so the two are compared, and written, by the related rows' `code`. A key the source
 * app's related worksheet lacks is a dead letter naming the record, with nothing written
 * to that app; an attachment on the source worksheet is refused naming the job file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const JOB = (extra = '') => `name: orders
source: { type: worksheet, worksheet: orders, credentialsEnvPrefix: CRM_ }
target: { worksheet: orders, mode: two-way, key: ref, conflict: source }
fields:
  ref: ref
  customer: { from: customer, relationKey: code }
${extra}`;

let h: Harness;
const app: Record<
  'a' | 'b',
  { client: PlatformClient; customers: WorksheetStructure; orders: WorksheetStructure }
> = {} as never;
const rowOf: Record<'a' | 'b', Map<string, string>> = { a: new Map(), b: new Map() };

const writesTo = (sheet: WorksheetStructure) =>
  h.emulator.requests.filter(
    (r) =>
      r.method !== 'GET' &&
      r.path.includes(sheet.id) &&
      /\/rows(\/|$)/.test(r.path) &&
      !r.path.endsWith('/list'),
  ).length;
const counts = () => ({ a: writesTo(app.a.orders), b: writesTo(app.b.orders) });
const linked = (side: 'a' | 'b') =>
  new Map(h.emulator.state.rows(app[side].orders.id).map((r) => [r.text.ref ?? '', r.values.customer ?? []]));
async function run() {
  const { record } = await h.runJob('orders');
  return record;
}

beforeAll(async () => {
  h = await createHarness('two-way-ws-rel', { requestLogLimit: 1_000_000 });
  const crm = h.emulator.createApp({ name: 'crm' });
  h.env.CRM_APPKEY = crm.appKey;
  h.env.CRM_SIGN = crm.sign;
  h.env.CRM_API_URL = h.emulator.url;
  for (const [side, appId, codes] of [
    ['a', h.appId, ['ACME', 'BETA', 'GAMMA']],
    ['b', crm.appId, ['BETA', 'ACME']],
  ] as const) {
    const customers = h.emulator.createWorksheet(appId, {
      name: 'Customers',
      alias: 'customers',
      fields: [{ name: 'Code', alias: 'code', type: 'Text' }],
    });
    const orders = h.emulator.createWorksheet(appId, {
      name: 'Orders',
      alias: 'orders',
      fields: [
        { name: 'Ref', alias: 'ref', type: 'Text' },
        { name: 'Customer', alias: 'customer', type: 'Relation', dataSource: customers.id, subType: 1 },
        { name: 'Scan', alias: 'scan', type: 'Attachment' },
      ],
    });
    const client = h.rt.clientFor(side === 'a' ? undefined : 'CRM_');
    app[side] = { client, customers, orders };
    const { rowIds } = await client.rows.batchCreate(customers.id, {
      rows: codes.map((code) => ({ fields: [{ id: 'code', value: code }] })),
    });
    codes.forEach((code, i) => rowOf[side].set(code, rowIds[i]!));
  }
  await app.b.client.rows.batchCreate(app.b.orders.id, {
    rows: [
      {
        fields: [
          { id: 'ref', value: 'O1' },
          { id: 'customer', value: [rowOf.b.get('ACME')] },
        ],
      },
    ],
  });
  await app.a.client.rows.batchCreate(app.a.orders.id, {
    rows: [
      {
        fields: [
          { id: 'ref', value: 'O2' },
          { id: 'customer', value: [rowOf.a.get('BETA')] },
        ],
      },
    ],
  });
  await h.writeJob('orders', JOB());
}, 60_000);

afterAll(async () => {
  await h?.close();
});

describe('worksheet <-> worksheet relations by key (issue 25)', { timeout: 120_000 }, () => {
  it("links each app's own related row by key, both ways; a quiet run writes nothing", async () => {
    expect((await run()).status).toBe('completed');
    expect(linked('a').get('O1')).toEqual([rowOf.a.get('ACME')]);
    expect(linked('b').get('O2')).toEqual([rowOf.b.get('BETA')]);
    const before = counts();
    expect((await run()).status).toBe('completed');
    expect(counts()).toEqual(before);
  });

  it("a link edited in the source app reaches the target app's row of the same key, once", async () => {
    const o1 = h.emulator.state.rows(app.b.orders.id).find((r) => r.text.ref === 'O1')!;
    await app.b.client.rows.update(app.b.orders.id, o1.id, {
      fields: [{ id: 'customer', value: [rowOf.b.get('BETA')] }],
    });
    const before = counts();
    expect((await run()).status).toBe('completed');
    expect(counts()).toEqual({ a: before.a + 1, b: before.b });
    expect(linked('a').get('O1')).toEqual([rowOf.a.get('BETA')]);
  });

  it('a key the source app lacks is a dead letter naming the record; nothing is written there', async () => {
    const o2 = h.emulator.state.rows(app.a.orders.id).find((r) => r.text.ref === 'O2')!;
    await app.a.client.rows.update(app.a.orders.id, o2.id, {
      fields: [{ id: 'customer', value: [rowOf.a.get('GAMMA')] }],
    });
    const before = counts();
    const record = await run();
    expect(record.status).toBe('completed');
    const { entries } = await h.rt.deadLetters.list({ job: 'orders' });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ field: 'customer', category: 'invalid-row' });
    expect(entries[0]!.message).toContain('record O2 ');
    expect(entries[0]!.message).toContain('refused by source worksheet orders');
    expect(entries[0]!.message).toContain('customer: no row in related worksheet');
    expect(entries[0]!.message).toContain('code = "GAMMA"');
    expect(counts().b).toBe(before.b);
    expect(linked('b').get('O2')).toEqual([rowOf.b.get('BETA')]);
  });

  it('an attachment of the source worksheet is refused, naming the job file and the field', async () => {
    await h.writeJob('orders', JOB('  scan: scan\n'));
    const record = await run();
    expect(record.status).toBe('failed');
    expect(record.message).toMatch(/orders\.yaml: these fields cannot be synced two-way/);
    expect(record.message).toContain('fields.scan: Attachment field Scan of source worksheet Orders');
    await h.writeJob('orders', JOB());
  });
});
