import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

// Against the platform's dialect (the default) and the seed spec's forms.
describe.each(['platform', 'spec'] as const)(
  "references (%s dialect): members by exact name and relations by the related worksheet's key",
  (dialect) => {
    let h: Harness;
    let customers: string;
    let deals: string;
    const customerIds = new Map<string, string>();

    beforeAll(async () => {
      h = await createHarness(`refs-${dialect}`, { dialect });
      customers = h.createWorksheet({
        name: 'Customers',
        alias: 'customers',
        fields: [
          { name: 'Code', alias: 'code', type: '2', required: true, isTitle: true },
          { name: 'Legacy no', alias: 'legacy_no', type: '2' },
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
          { name: 'Previous customer', alias: 'previous', type: '29', dataSource: customers },
        ],
      });
      const client = h.rt.clientFor();
      const { rowIds } = await client.rows.batchCreate(customers, {
        rows: ['C-1', 'C-2'].map((code) => ({
          fields: [
            { id: 'code', value: code },
            { id: 'name', value: `Customer ${code}` },
            { id: 'legacy_no', value: `L${code}` },
          ],
        })),
      });
      customerIds.set('C-1', rowIds[0]!);
      customerIds.set('C-2', rowIds[1]!);
      await h.writeFile(
        'deals.csv',
        [
          'deal,customer,owner,previous',
          'D-1,C-1,Ben Sales,LC-2',
          'D-2,C-2,Cy Engineer,LC-1',
          'D-3,C-9,Ben Sales,LC-1',
          'D-4,C-1,Nobody Here,LC-1',
          'D-5,C-2,Ben Sales,LC-2',
        ].join('\n') + '\n',
      );
      await h.writeJob(
        'deals',
        `name: deals
source: { type: csv, path: ./deals.csv }
target: { worksheet: deals, mode: upsert, key: deal }
fields:
  deal: deal
  customer: { from: customer, relationKey: code }
  owner: { from: owner, lookupBy: name }
  previous: { from: previous, relationKey: FIELD_ID }
`.replace('FIELD_ID', legacyFieldId()),
      );
    });
    // The related key named by its field id (the key above is named by alias).
    const legacyFieldId = () =>
      h.emulator.state.worksheet(customers)!.fields.find((f) => f.alias === 'legacy_no')!.id;
    afterAll(async () => {
      await h.close();
    });

    it('links rows to related rows and members, and dead-letters the ones nobody can find', async () => {
      const before = h.emulator.requests.length;
      const { report } = await h.runJob('deals');
      expect(report).toMatchObject({ created: 3, deadLetteredTotal: 2, deadLettered: { 'invalid-row': 2 } });
      const deal = (no: string) => {
        const row = h.emulator.state.rows(deals).find((r) => r.values.deal === no);
        return { customer: row?.values.customer, owner: row?.values.owner, previous: row?.values.previous };
      };
      expect(deal('D-1')).toEqual({
        customer: [customerIds.get('C-1')],
        owner: ['a0000000-0000-4000-8000-000000000002'],
        previous: [customerIds.get('C-2')],
      });
      expect(deal('D-2')).toEqual({
        customer: [customerIds.get('C-2')],
        owner: ['a0000000-0000-4000-8000-000000000003'],
        previous: [customerIds.get('C-1')],
      });
      expect(deal('D-5').owner).toEqual(['a0000000-0000-4000-8000-000000000002']);
      // One lookup per distinct name per run (Ben Sales is on three rows), never a list of everyone.
      const lookups = h.emulator.requests.slice(before).filter((r) => r.path === '/v3/users/lookup');
      expect(lookups).toHaveLength(3);
      const { entries } = await h.rt.deadLetters.list({ job: 'deals' });
      const reasons = entries.map((e) => e.message).sort();
      expect(reasons[0]).toMatch(/customer: no row in related worksheet .* with code = "C-9"/);
      expect(reasons[1]).toMatch(/owner: no organisation member with name "Nobody Here"/);
    });

    it('re-runs without a single write: references are compared as ids', async () => {
      const before = h.emulator.requests.length;
      const { report } = await h.runJob('deals');
      expect(report).toMatchObject({ created: 0, updated: 0, unchanged: 3 });
      const writes = h.emulator.requests
        .slice(before)
        .filter((r) => r.method !== 'GET' && !r.path.endsWith('/list'));
      expect(writes).toEqual([]);
    });
  },
);
