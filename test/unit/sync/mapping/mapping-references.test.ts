import { describe, expect, it } from 'vitest';
import type { WorksheetStructure } from '../../../../src/api/types.ts';
import { mapRecord } from '../../../../src/sync/mapping/map-record.ts';
import type { MapResult } from '../../../../src/sync/mapping/map-result.ts';
import { createReferenceCache } from '../../../../src/sync/mapping/reference-cache.ts';
import { resolveReferences } from '../../../../src/sync/mapping/resolve-references.ts';
import { validateMapping } from '../../../../src/sync/mapping/validate-mapping.ts';

const structure: WorksheetStructure = {
  id: 'ws_orders',
  name: 'Orders',
  fields: [
    { id: 'f_no', name: 'Order No', alias: 'order_no', type: 'Text' },
    { id: 'f_owner', name: 'Owner', alias: 'owner', type: 'Collaborator' },
    { id: 'f_cust', name: 'Customer', alias: 'customer', type: 'Relation', dataSource: 'ws_customers' },
    { id: 'f_dept', name: 'Department', alias: 'dept', type: 'Department' },
  ],
};

const plan = validateMapping(
  [
    { target: 'order_no', from: 'no' },
    { target: 'owner', from: 'owner', lookupBy: 'name' },
    { target: 'customer', from: 'customer', relationKey: 'code' },
  ],
  structure,
  { mode: 'upsert', key: 'order_no' },
);

const directory = new Map([
  ['Ana Lima', 'acc-ana'],
  ['Bo Chen', 'acc-bo'],
]);
const customers = new Map([
  ['C-1', 'row-c1'],
  ['C-2', 'row-c2'],
]);

function fakeLookups() {
  const calls: Array<{ kind: string; args: unknown[] }> = [];
  return {
    calls,
    lookupMembers(by: 'name' | 'email', values: string[]) {
      calls.push({ kind: 'members', args: [by, values] });
      return Promise.resolve(
        new Map(values.filter((v) => directory.has(v)).map((v) => [v, directory.get(v)!])),
      );
    },
    lookupRelations(worksheetId: string, keyField: string, values: string[]) {
      calls.push({ kind: 'relations', args: [worksheetId, keyField, values] });
      return Promise.resolve(
        new Map(values.filter((v) => customers.has(v)).map((v) => [v, customers.get(v)!])),
      );
    },
  };
}

function mapAll(records: Array<Record<string, unknown>>): MapResult[] {
  return records.map((data) => mapRecord(plan, data));
}

describe('member mapping', () => {
  it('refuses lookupBy email with the reason and what to use instead', () => {
    expect(() =>
      validateMapping([{ target: 'owner', from: 'owner', lookupBy: 'email' }], structure, { mode: 'append' }),
    ).toThrow(/owner: members cannot be found by email: the platform masks emails.*lookupTable/);
  });

  it('maps through a lookupTable, case-insensitively, and rejects a value missing from it by name', () => {
    const tablePlan = validateMapping(
      [
        {
          target: 'owner',
          from: 'owner',
          lookupTable: { 'ana@example.com': 'acc-ana', 'bo@example.com': 'acc-bo' },
        },
      ],
      structure,
      { mode: 'append' },
    );
    const ok = mapRecord(tablePlan, { owner: 'Ana@Example.com; bo@example.com' });
    expect(ok.ok && ok.fields[0]?.value).toEqual(['acc-ana', 'acc-bo']);
    expect(ok.ok && ok.pending).toBeUndefined();
    const missing = mapRecord(tablePlan, { owner: 'cy@example.com' });
    expect(!missing.ok && missing.errors[0]?.reason).toBe(
      'no member for "cy@example.com" in the mapping\'s lookupTable (add an entry: value → accountId)',
    );
  });
});

describe('resolveReferences', () => {
  it('looks up each distinct value once per batch and writes ids', async () => {
    const lookups = fakeLookups();
    const batch = mapAll([
      { no: '1', owner: 'Ana Lima', customer: 'C-1' },
      { no: '2', owner: 'Ana Lima; Bo Chen', customer: 'C-2' },
      { no: '3', owner: 'Bo Chen', customer: 'C-1' },
    ]);
    expect(batch[0]!.ok && batch[0]!.pending).toHaveLength(2);
    const resolved = await resolveReferences(plan, batch, lookups);
    expect(lookups.calls).toEqual([
      { kind: 'members', args: ['name', ['Ana Lima', 'Bo Chen']] },
      { kind: 'relations', args: ['ws_customers', 'code', ['C-1', 'C-2']] },
    ]);
    expect(resolved.map((r) => (r.ok ? r.fields.map((f) => f.value) : r.errors))).toEqual([
      ['1', ['acc-ana'], ['row-c1']],
      ['2', ['acc-ana', 'acc-bo'], ['row-c2']],
      ['3', ['acc-bo'], ['row-c1']],
    ]);
    expect(resolved.every((r) => r.ok && r.pending === undefined)).toBe(true);
  });

  it('rejects only the rows whose values nobody finds, with the reason', async () => {
    const resolved = await resolveReferences(
      plan,
      mapAll([
        { no: '1', owner: 'Ana Lima', customer: 'C-404' },
        { no: '2', owner: 'Ghost Writer', customer: 'C-1' },
        { no: '3', owner: 'Bo Chen', customer: 'C-2' },
      ]),
      fakeLookups(),
    );
    expect(resolved[0]).toEqual({
      ok: false,
      category: 'invalid-row',
      errors: [
        {
          field: 'customer',
          column: 'customer',
          value: 'C-404',
          reason: 'no row in related worksheet ws_customers with code = "C-404"',
        },
      ],
    });
    expect(resolved[1]).toMatchObject({
      ok: false,
      errors: [
        {
          field: 'owner',
          column: 'owner',
          value: 'Ghost Writer',
          reason: 'no organisation member with name "Ghost Writer"',
        },
      ],
    });
    expect(resolved[2]).toMatchObject({ ok: true, key: '3' });
  });

  it('keeps hits in the caller cache so the next batch asks only for new values', async () => {
    const cache = createReferenceCache();
    const first = fakeLookups();
    await resolveReferences(plan, mapAll([{ no: '1', owner: 'Ana Lima', customer: 'C-1' }]), {
      ...first,
      cache,
    });
    const second = fakeLookups();
    const resolved = await resolveReferences(
      plan,
      mapAll([
        { no: '2', owner: 'Ana Lima', customer: 'C-1' },
        { no: '3', owner: 'Bo Chen', customer: 'C-1' },
      ]),
      { ...second, cache },
    );
    expect(second.calls).toEqual([{ kind: 'members', args: ['name', ['Bo Chen']] }]);
    expect(resolved.map((r) => r.ok && r.fields[2]?.value)).toEqual([['row-c1'], ['row-c1']]);
  });

  it('does not cache misses: a related row created later is found', async () => {
    const cache = createReferenceCache();
    const lookups = fakeLookups();
    const [miss] = await resolveReferences(plan, mapAll([{ no: '1', owner: '', customer: 'C-3' }]), {
      ...lookups,
      cache,
    });
    expect(miss!.ok).toBe(false);
    customers.set('C-3', 'row-c3');
    const [hit] = await resolveReferences(plan, mapAll([{ no: '1', owner: '', customer: 'C-3' }]), {
      ...lookups,
      cache,
    });
    customers.delete('C-3');
    expect(hit!.ok && hit!.fields[2]?.value).toEqual(['row-c3']);
  });

  it('keeps the hash of a row the same before and after resolution', async () => {
    const batch = mapAll([{ no: '1', owner: 'Ana Lima', customer: 'C-1' }]);
    const [resolved] = await resolveReferences(plan, batch, fakeLookups());
    expect(resolved!.ok && resolved!.hash).toBe(batch[0]!.ok && batch[0]!.hash);
  });

  it('passes rejected rows through untouched and makes no call for a batch without lookups', async () => {
    const lookups = fakeLookups();
    const rejected: MapResult = {
      ok: false,
      category: 'invalid-row',
      errors: [{ field: 'x', column: 'x', value: '', reason: 'r' }],
    };
    const out = await resolveReferences(
      plan,
      [rejected, ...mapAll([{ no: '9', owner: '', customer: '' }])],
      lookups,
    );
    expect(out[0]).toBe(rejected);
    expect(out[1]).toMatchObject({ ok: true });
    expect(lookups.calls).toEqual([]);
  });

  it('lets a failing lookup reject the whole call: it is not a row problem', async () => {
    const failing = { ...fakeLookups(), lookupRelations: () => Promise.reject(new Error('socket hang up')) };
    await expect(
      resolveReferences(plan, mapAll([{ no: '1', owner: '', customer: 'C-1' }]), failing),
    ).rejects.toThrow('socket hang up');
  });

  it('rejects department names when no department lookup is configured, and resolves them when one is', async () => {
    const deptPlan = validateMapping([{ target: 'dept', from: 'd', lookupBy: 'name' }], structure, {
      mode: 'append',
    });
    const batch = [mapRecord(deptPlan, { d: 'Sales' })];
    const [without] = await resolveReferences(deptPlan, batch, fakeLookups());
    expect(without).toMatchObject({
      ok: false,
      errors: [{ field: 'dept', reason: expect.stringMatching(/need a department lookup/) }],
    });
    const [withLookup] = await resolveReferences(deptPlan, batch, {
      ...fakeLookups(),
      lookupDepartments: (values) => Promise.resolve(new Map(values.map((v) => [v, `dep-${v}`]))),
    });
    expect(withLookup!.ok && withLookup!.fields[0]?.value).toEqual(['dep-Sales']);
  });

  it('evicts the oldest cache entries beyond its bound', () => {
    const cache = createReferenceCache({ maxEntries: 2 });
    cache.set('s', 'a', '1');
    cache.set('s', 'b', '2');
    cache.set('s', 'c', '3');
    expect([cache.get('s', 'a'), cache.get('s', 'b'), cache.get('s', 'c'), cache.size]).toEqual([
      undefined,
      '2',
      '3',
      2,
    ]);
    expect(() => createReferenceCache({ maxEntries: 0 })).toThrow(/maxEntries must be a positive integer/);
  });
});
