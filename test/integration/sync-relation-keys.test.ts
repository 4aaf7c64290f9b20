import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FieldDefinition } from '../../src/emulator/wire-types.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const BEN = 'a0000000-0000-4000-8000-000000000002';
const CY = 'a0000000-0000-4000-8000-000000000003';

/** The emulator takes `precision` and `subType`; the client's field definition type does not name them. */
const field = (def: FieldDefinition & { precision?: number; subType?: number }) => def;

/**
 * Related rows are found by their key in canonical form (a precision-2 Number reads back
 * "42.00"; selects and members by their text), and a single member or relation field
 * (Collaborator subType 0, Relation subType 1) takes one id: a source value naming
 * several dead-letters its row instead of being cut or refused by the platform.
 */
describe("relations by the related worksheet's key, and single member and relation fields", () => {
  let h: Harness;
  let customers: string;
  let deals: string;
  const customerIds = new Map<string, string>();

  beforeAll(async () => {
    h = await createHarness('relkeys');
    customers = h.createWorksheet({
      name: 'Customers',
      alias: 'customers',
      fields: [
        field({ name: 'Name', alias: 'name', type: '2', isTitle: true }),
        field({ name: 'No', alias: 'no', type: '6', precision: 2 }),
        field({
          name: 'Tier',
          alias: 'tier',
          type: '11',
          options: [
            { value: 'Gold', index: 1 },
            { value: 'Silver', index: 2 },
          ],
        }),
        field({ name: 'Manager', alias: 'manager', type: '26', subType: 0 }),
      ],
    });
    deals = h.createWorksheet({
      name: 'Deals',
      alias: 'deals',
      fields: [
        field({ name: 'Deal', alias: 'deal', type: '2', required: true, isTitle: true }),
        field({ name: 'By no', alias: 'by_no', type: '29', dataSource: customers, subType: 1 }),
        field({ name: 'By tier', alias: 'by_tier', type: '29', dataSource: customers, subType: 2 }),
        field({ name: 'By manager', alias: 'by_manager', type: '29', dataSource: customers, subType: 1 }),
        field({ name: 'Lead', alias: 'lead', type: '26', subType: 0 }),
      ],
    });
    const client = h.rt.clientFor();
    const structure = await client.worksheets.get(customers);
    const options = new Map(
      structure.fields.find((f) => f.alias === 'tier')!.options!.map((o) => [o.value, o.key]),
    );
    const { rowIds } = await client.rows.batchCreate(customers, {
      rows: [
        ['Acme', 42, 'Gold', BEN],
        ['Birch', 43, 'Silver', CY],
      ].map(([name, no, tier, manager]) => ({
        fields: [
          { id: 'name', value: name },
          { id: 'no', value: no },
          { id: 'tier', value: [options.get(tier as string)] },
          { id: 'manager', value: [manager] },
        ],
      })),
    });
    customerIds.set('Acme', rowIds[0]!);
    customerIds.set('Birch', rowIds[1]!);
    await h.writeFile(
      'deals.csv',
      [
        'deal,no,tier,manager,lead',
        'D-1,42,Gold,Ben Sales,Ben Sales',
        'D-2,43,Gold;Silver,Cy Engineer,Cy Engineer',
        'D-3,42;43,Gold,Ben Sales,Ben Sales',
        'D-4,42,Gold,Ben Sales,Ben Sales;Cy Engineer',
      ].join('\n') + '\n',
    );
    await h.writeJob(
      'deals',
      `name: deals
source: { type: csv, path: ./deals.csv }
target: { worksheet: deals, mode: upsert, key: deal, triggerWorkflow: false }
fields:
  deal: deal
  by_no: { from: no, relationKey: no }
  by_tier: { from: tier, relationKey: tier }
  by_manager: { from: manager, relationKey: manager }
  lead: { from: lead, lookupBy: name }
`,
    );
  });
  afterAll(async () => {
    await h.close();
  });

  const deal = (no: string) => {
    const row = h.emulator.state.rows(deals).find((r) => r.values.deal === no);
    return row === undefined
      ? undefined
      : {
          by_no: row.values.by_no,
          by_tier: row.values.by_tier,
          by_manager: row.values.by_manager,
          lead: row.values.lead,
        };
  };

  it('links by a Number key read back as "42.00", a select key and a member key by their text', async () => {
    const { record, report } = await h.runJob('deals');
    expect(record.status).toBe('completed');
    expect(report).toMatchObject({ created: 2, deadLetteredTotal: 2 });
    expect(deal('D-1')).toEqual({
      by_no: [customerIds.get('Acme')],
      by_tier: [customerIds.get('Acme')],
      by_manager: [customerIds.get('Acme')],
      lead: [BEN],
    });
    expect(deal('D-2')).toEqual({
      by_no: [customerIds.get('Birch')],
      by_tier: [customerIds.get('Acme'), customerIds.get('Birch')],
      by_manager: [customerIds.get('Birch')],
      lead: [CY],
    });
  });

  it('dead-letters a single relation or member field given several values, naming the field and why', async () => {
    expect(deal('D-3')).toBeUndefined();
    expect(deal('D-4')).toBeUndefined();
    const { entries } = await h.rt.deadLetters.list({ job: 'deals' });
    const byLine = new Map(entries.map((e) => [e.source.position.line, e]));
    expect(byLine.get(4)).toMatchObject({ category: 'invalid-row', field: 'by_no' });
    expect(byLine.get(4)!.message).toMatch(/by_no.*one related row.*got 2: "42", "43"/);
    expect(byLine.get(5)).toMatchObject({ category: 'invalid-row', field: 'lead' });
    expect(byLine.get(5)!.message).toMatch(/lead.*one member.*got 2: "Ben Sales", "Cy Engineer"/);
  });

  it('re-runs without a single write', async () => {
    const before = h.emulator.requests.length;
    const { report } = await h.runJob('deals');
    expect(report).toMatchObject({ created: 0, updated: 0, unchanged: 2, deadLetteredTotal: 2 });
    const writes = h.emulator.requests
      .slice(before)
      .filter((r) => r.method !== 'GET' && !r.path.endsWith('/list'));
    expect(writes).toEqual([]);
    expect(h.emulator.state.rowCount(deals)).toBe(2);
  });
});
