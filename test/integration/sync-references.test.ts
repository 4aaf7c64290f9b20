import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

describe('references: members by lookup and relations by the related worksheet\'s key', () => {
  let h: Harness;
  let customers: string;
  let deals: string;
  const customerIds = new Map<string, string>();

  beforeAll(async () => {
    h = await createHarness('refs');
    customers = h.createWorksheet({
      name: 'Customers',
      alias: 'customers',
      fields: [
        { name: 'Code', alias: 'code', type: '2', required: true, isTitle: true },
        { name: 'Name', alias: 'name', type: '2' },
      ],
    });
    deals = h.createWorksheet({
      name: 'Deals',
      alias: 'deals',
      fields: [
        { name: 'Deal', alias: 'deal', type: '2', required: true, isTitle: true },
        { name: 'Customer', alias: 'customer', type: '29', dataSource: customers },
        { name: 'Owner', alias: 'owner', type: '26' },
      ],
    });
    const client = h.rt.clientFor();
    const { rowIds } = await client.rows.batchCreate(customers, {
      rows: ['C-1', 'C-2'].map((code) => ({ fields: [{ id: 'code', value: code }, { id: 'name', value: `Customer ${code}` }] })),
    });
    customerIds.set('C-1', rowIds[0]!);
    customerIds.set('C-2', rowIds[1]!);
    await h.writeFile(
      'deals.csv',
      ['deal,customer,owner', 'D-1,C-1,ben@example.com', 'D-2,C-2,CY@example.com', 'D-3,C-9,ben@example.com', 'D-4,C-1,nobody@example.com'].join('\n') +
        '\n',
    );
    await h.writeJob(
      'deals',
      `name: deals
source: { type: csv, path: ./deals.csv }
target: { worksheet: deals, mode: upsert, key: deal }
fields:
  deal: deal
  customer: { from: customer, relationKey: code }
  owner: { from: owner, lookupBy: email }
`,
    );
  });
  afterAll(async () => {
    await h.close();
  });

  it('links rows to related rows and members, and dead-letters the ones nobody can find', async () => {
    const { report } = await h.runJob('deals');
    expect(report).toMatchObject({ created: 2, deadLetteredTotal: 2, deadLettered: { 'invalid-row': 2 } });
    const rows = new Map(h.emulator.state.rows(deals).map((r) => [String(r.values.deal), r.values]));
    expect(rows.get('D-1')).toMatchObject({ customer: [customerIds.get('C-1')], owner: ['a0000000-0000-4000-8000-000000000002'] });
    expect(rows.get('D-2')).toMatchObject({ customer: [customerIds.get('C-2')], owner: ['a0000000-0000-4000-8000-000000000003'] });
    const { entries } = await h.rt.deadLetters.list({ job: 'deals' });
    const reasons = entries.map((e) => e.message).sort();
    expect(reasons[0]).toMatch(/customer: no row in related worksheet .* with code = "C-9"/);
    expect(reasons[1]).toMatch(/owner: no organisation member with email "nobody@example.com"/);
  });

  it('re-runs without a single write: references are compared as ids', async () => {
    const before = h.emulator.requests.length;
    const { report } = await h.runJob('deals');
    expect(report).toMatchObject({ created: 0, updated: 0, unchanged: 2 });
    const writes = h.emulator.requests.slice(before).filter((r) => r.method !== 'GET' && !r.path.endsWith('/list'));
    expect(writes).toEqual([]);
  });
});
