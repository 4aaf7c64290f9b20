import { describe, expect, it } from 'vitest';
import type { WorksheetStructure } from '../../../../src/api/types.ts';
import { MappingError } from '../../../../src/sync/mapping/mapping-error.ts';
import type { ValidateMappingOptions } from '../../../../src/sync/mapping/plan-types.ts';
import { validateMapping } from '../../../../src/sync/mapping/validate-mapping.ts';
import type { FieldMapping } from '../../../../src/sync/model/types.ts';

const structure: WorksheetStructure = {
  id: 'ws_orders',
  name: 'Orders',
  fields: [
    { id: '64a000000000000000000001', name: 'Order No', alias: 'order_no', type: '2', required: true },
    {
      id: '64a000000000000000000002',
      name: 'Customer Name',
      alias: 'customer_name',
      type: 'Text',
      required: true,
    },
    { id: '64a000000000000000000003', name: 'Amount', alias: 'amount', type: 'Currency' },
    { id: '64a000000000000000000004', name: 'Total', alias: 'total', type: '31' },
    { id: '64a000000000000000000005', name: 'Seq', alias: 'seq', type: 'AutoNumber', required: true },
    { id: '64a000000000000000000006', name: 'Lines', alias: 'lines', type: 'SubTable' },
    {
      id: '64a000000000000000000007',
      name: 'Approved by',
      alias: 'approved',
      type: 'Text',
      isReadOnly: true,
    },
    {
      id: '64a000000000000000000008',
      name: 'Customer',
      alias: 'customer',
      type: 'Relation',
      dataSource: 'ws_customers',
    },
    { id: '64a000000000000000000009', name: 'Placed', alias: 'placed', type: 'Date' },
    {
      id: '64a00000000000000000000a',
      name: 'Status',
      alias: 'status',
      type: 'SingleSelect',
      options: [{ key: 'k1', value: 'Open' }],
    },
    { id: '64a00000000000000000000b', name: 'Owner', alias: '', type: 'Collaborator' },
  ],
};

function problemsOf(mappings: FieldMapping[], opts: ValidateMappingOptions): Array<[string, string]> {
  try {
    validateMapping(mappings, structure, opts);
  } catch (err) {
    expect(err).toBeInstanceOf(MappingError);
    return (err as MappingError).problems.map((p) => [p.target, p.message]);
  }
  throw new Error('validateMapping accepted the mapping');
}

const base: FieldMapping[] = [
  { target: 'order_no', from: 'no' },
  { target: 'customer_name', from: 'name' },
];

describe('validateMapping', () => {
  it('compiles a valid mapping, matching targets by alias or by field id', () => {
    const plan = validateMapping(
      [
        ...base,
        { target: '64a000000000000000000003', from: 'amt' },
        { target: 'placed', from: 'd', format: 'DD/MM/YYYY' },
      ],
      structure,
      { mode: 'upsert', key: 'order_no' },
    );
    expect(plan.fields.map((f) => [f.id, f.type])).toEqual([
      ['64a000000000000000000001', 'Text'],
      ['64a000000000000000000002', 'Text'],
      ['64a000000000000000000003', 'Currency'],
      ['64a000000000000000000009', 'Date'],
    ]);
    expect(plan.keyIndex).toBe(0);
    expect(plan.byTarget.get('amount')?.id).toBe('64a000000000000000000003');
  });

  it('lists every problem at once, with did-you-mean for unknown targets', () => {
    const problems = problemsOf(
      [
        { target: 'order_no', from: 'no' },
        { target: 'Customer Name', from: 'name' },
        { target: 'amuont', from: 'amt' },
        { target: 'total', from: 't' },
        { target: 'lines', from: 'l' },
        { target: 'approved', from: 'a' },
        { target: 'customer', from: 'c' },
        { target: 'nothing_like_it', from: 'x' },
      ],
      { mode: 'upsert', key: 'order_no', jobFile: 'jobs/orders.yaml' },
    );
    expect(problems).toEqual([
      [
        'Customer Name',
        expect.stringMatching(
          /no field with this id or alias in worksheet Orders; did you mean "customer_name" \(Customer Name\)\?/,
        ),
      ],
      ['amuont', expect.stringMatching(/did you mean "amount" \(Amount\)\?/)],
      ['total', expect.stringMatching(/read-only \(Formula\)/)],
      [
        'lines',
        expect.stringMatching(/type SubTable, which rowbridge cannot write; supported: Text, .*Relation/),
      ],
      ['approved', expect.stringMatching(/read-only \(Text\)/)],
      ['customer', expect.stringMatching(/need `relationKey`/)],
      ['nothing_like_it', expect.not.stringMatching(/did you mean/)],
      [
        'customer_name',
        expect.stringMatching(/required field "Customer Name" has no mapping; mode upsert creates rows/),
      ],
    ]);
  });

  it('puts the job file and every problem in the message', () => {
    try {
      validateMapping([{ target: 'amuont', from: 'a' }], structure, {
        mode: 'append',
        jobFile: 'jobs/orders.yaml',
      });
      expect.unreachable();
    } catch (err) {
      const message = (err as Error).message;
      expect(message).toMatch(
        /^jobs\/orders\.yaml: field mapping does not fit worksheet Orders \(3 problems\)/,
      );
      expect(message).toContain('amuont: no field');
      expect(message).toContain('order_no: required field "Order No"');
      expect((err as MappingError).code).toBe('ROWBRIDGE_CONFIG_ERROR');
    }
  });

  it('does not ask for required fields in update mode, and skips computed required fields', () => {
    const plan = validateMapping(
      [
        { target: 'amount', from: 'a' },
        { target: 'order_no', from: 'no' },
      ],
      structure,
      { mode: 'update', key: 'order_no' },
    );
    expect(plan.fields).toHaveLength(2);
    // Seq is required but AutoNumber: never reported in creating modes either.
    expect(problemsOf([{ target: 'nope', from: 'x' }], { mode: 'append' }).map(([t]) => t)).not.toContain(
      'seq',
    );
  });

  it('checks the key: needed outside append, must exist and be mapped', () => {
    expect(problemsOf(base, { mode: 'mirror' })).toEqual([
      ['(key)', expect.stringMatching(/mode mirror .* needs a key field/)],
    ]);
    expect(problemsOf(base, { mode: 'upsert', key: 'ordr_no' })).toEqual([
      ['ordr_no', expect.stringMatching(/key field is not in worksheet Orders; did you mean "order_no"/)],
    ]);
    expect(problemsOf(base, { mode: 'upsert', key: 'amount' })).toEqual([
      ['amount', expect.stringMatching(/key field "Amount" is not in the mapping/)],
    ]);
    expect(problemsOf([...base, { target: 'status', from: 's' }], { mode: 'upsert', key: 'status' })).toEqual(
      [['status', expect.stringMatching(/SingleSelect field cannot be the key/)]],
    );
  });

  it('rejects options that do not fit the field type', () => {
    const problems = problemsOf(
      [
        ...base,
        { target: 'amount', from: 'a', format: 'DD/MM/YYYY', createOptions: true },
        { target: 'placed', from: 'p', format: 'YYYY-MM-DDTHH:mm:ssZ', timezone: 'Moon/Base' },
        { target: 'status', from: 's', lookupBy: 'email' },
        { target: '64a00000000000000000000b', from: 'o', relationKey: 'code' },
      ],
      { mode: 'append' },
    );
    expect(problems).toEqual([
      ['amount', expect.stringMatching(/`format` applies to Date, DateTime and Time fields, not Currency/)],
      ['amount', expect.stringMatching(/`createOptions` applies to SingleSelect/)],
      ['placed', expect.stringMatching(/offset token/)],
      ['placed', expect.stringMatching(/unknown time zone "Moon\/Base"/)],
      ['status', expect.stringMatching(/`lookupBy` applies to Collaborator and Department/)],
      ['64a00000000000000000000b', expect.stringMatching(/`relationKey` applies to Relation fields/)],
    ]);
  });

  it('rejects a mapping without a source, a field mapped twice and a bad constant', () => {
    const problems = problemsOf(
      [
        ...base,
        { target: 'amount' },
        { target: 'placed', from: 'p' },
        { target: '64a000000000000000000009', from: 'q' },
        { target: 'status', value: 'Closed' },
      ],
      { mode: 'append' },
    );
    expect(problems).toEqual([
      ['amount', expect.stringMatching(/needs `from` \(a source column\) or `value`/)],
      ['64a000000000000000000009', expect.stringMatching(/already mapped by "placed"/)],
      [
        'status',
        expect.stringMatching(
          /constant value "Closed" cannot be written: no option "Closed"; allowed: "Open"/,
        ),
      ],
    ]);
  });

  it('rejects an unknown target timezone', () => {
    expect(problemsOf(base, { mode: 'append', targetTimezone: 'Europe/Atlantis' })).toEqual([
      ['(targetTimezone)', expect.stringMatching(/unknown time zone/)],
    ]);
  });

  it('needs the related worksheet for relation lookups', () => {
    const noSource: WorksheetStructure = {
      ...structure,
      fields: [{ id: 'r', name: 'Rel', alias: 'rel', type: '29' }],
    };
    expect(() =>
      validateMapping([{ target: 'rel', from: 'r', relationKey: 'code' }], noSource, { mode: 'append' }),
    ).toThrow(/dataSource/);
    expect(
      validateMapping([{ target: 'rel', from: 'r', relationKey: 'rowid' }], noSource, { mode: 'append' })
        .fields,
    ).toHaveLength(1);
  });
});
