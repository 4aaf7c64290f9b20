import { describe, expect, it } from 'vitest';
import { and, or, toWireFilter, validateFilter, where } from '../../../../src/api/rows/filter-builder.ts';
import { FilterError } from '../../../../src/api/rows/row-errors.ts';
import { ConfigError, classifyError } from '../../../../src/ground/errors.ts';
import { FILTER_OPERATORS } from '../../../../src/api/filter-operators.ts';
import type { FilterOperator } from '../../../../src/api/filter-operators.ts';
import type { Filter, WorksheetStructure } from '../../../../src/api/types.ts';

const structure: WorksheetStructure = {
  id: 'ws1',
  name: 'Orders',
  fields: [
    { id: '64a000000000000000000001', name: 'Customer', alias: 'customer', type: 'Text' },
    { id: '64a000000000000000000002', name: 'Price', alias: 'price', type: '6' },
    { id: '64a000000000000000000003', name: 'Status', alias: 'status', type: 'SingleSelect' },
    { id: '64a000000000000000000004', name: 'Team', alias: 'team', type: 'Department' },
    { id: '64a000000000000000000005', name: 'Due', alias: 'due', type: 'Date' },
    { id: '64a000000000000000000006', name: 'Files', alias: 'files', type: '14' },
    { id: '64a000000000000000000007', name: 'Notes', type: 'RichText' },
    { id: '64a000000000000000000008', name: 'Future', alias: 'future', type: '99' },
    { id: '64a000000000000000000009', name: 'Area', alias: 'area', type: 'Region' },
    { id: '64a00000000000000000000a', name: 'Category', alias: 'category', type: '35' },
    { id: '64a00000000000000000000b', name: 'In words', alias: 'in_words', type: 'AmountInWords' },
  ],
};

const REGION_OPS: FilterOperator[] = ['in', 'notin', 'belongsto', 'notbelongsto', 'isempty', 'isnotempty'];
const NUMBER_OPS: FilterOperator[] = [
  'eq',
  'ne',
  'gt',
  'ge',
  'lt',
  'le',
  'between',
  'notbetween',
  'isempty',
  'isnotempty',
];

/** Operator lists of platform-shapes §8, written out so a change to filter-operators.ts shows up here. */
const FAMILIES: Array<{ field: string; type: string; allowed: FilterOperator[] }> = [
  {
    field: 'customer',
    type: 'Text',
    allowed: [
      'eq',
      'ne',
      'contains',
      'notcontains',
      'startswith',
      'notstartswith',
      'endswith',
      'notendswith',
    ].concat(['concurrent', 'isempty', 'isnotempty']) as FilterOperator[],
  },
  {
    field: 'price',
    type: 'Number',
    allowed: ['eq', 'ne', 'gt', 'ge', 'lt', 'le', 'between', 'notbetween', 'isempty', 'isnotempty'],
  },
  {
    field: 'status',
    type: 'SingleSelect',
    allowed: ['in', 'notin', 'eq', 'ne', 'concurrent', 'isempty', 'isnotempty'],
  },
  {
    field: 'team',
    type: 'Department',
    allowed: ['in', 'notin', 'eq', 'ne', 'concurrent', 'isempty', 'isnotempty', 'belongsto', 'notbelongsto'],
  },
  { field: 'due', type: 'Date', allowed: ['between', 'notbetween', 'isempty', 'isnotempty'] },
  { field: 'files', type: 'Attachment', allowed: ['isempty', 'isnotempty'] },
  { field: 'area', type: 'Region', allowed: REGION_OPS },
  { field: 'category', type: 'CascadingSelect', allowed: REGION_OPS },
  { field: 'in_words', type: 'AmountInWords', allowed: NUMBER_OPS },
];

/** A value of the right shape for each operator. */
function valueFor(operator: FilterOperator): unknown {
  if (operator === 'between' || operator === 'notbetween') return ['1', '9'];
  if (operator === 'in' || operator === 'notin') return ['k1'];
  if (operator === 'isempty' || operator === 'isnotempty') return undefined;
  return 'x';
}

function condition(field: string, operator: string, value?: unknown): Filter {
  return { type: 'condition', field, operator, value } as Filter;
}

function errorOf(run: () => void): FilterError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(FilterError);
    return err as FilterError;
  }
  throw new Error('expected a FilterError');
}

describe('filter builder', () => {
  it('builds the wire shape of conditions and nested groups, values as arrays of strings', () => {
    const filter = and(
      and(where('status', 'in', ['k1', 'k2']), where('price', 'between', [5, 9.5])),
      or(where('price', 'ge', 10000), where('customer', 'contains', 'Harbor'), where('customer', 'isempty')),
    );
    // platform-shapes §8 and rows-list.json: `ge ["10000"]`, `contains ["Harbor"]`.
    expect(filter).toEqual({
      type: 'group',
      logic: 'AND',
      children: [
        {
          type: 'group',
          logic: 'AND',
          children: [
            { type: 'condition', field: 'status', operator: 'in', value: ['k1', 'k2'] },
            { type: 'condition', field: 'price', operator: 'between', value: ['5', '9.5'] },
          ],
        },
        {
          type: 'group',
          logic: 'OR',
          children: [
            { type: 'condition', field: 'price', operator: 'ge', value: ['10000'] },
            { type: 'condition', field: 'customer', operator: 'contains', value: ['Harbor'] },
            { type: 'condition', field: 'customer', operator: 'isempty' },
          ],
        },
      ],
    });
    expect('value' in (filter.children[1] as { children: object[] }).children[2]!).toBe(false);
  });

  it('turns hand-written filters into the wire form, leaving their shape alone', () => {
    const filter = {
      type: 'group',
      logic: 'OR',
      children: [
        { type: 'condition', field: 'customer', operator: 'eq', value: 'A-1' },
        { type: 'condition', field: 'price', operator: 'lt', value: 3 },
        { type: 'condition', field: 'files', operator: 'isnotempty', value: null },
      ],
    } as Filter;
    expect(toWireFilter(filter)).toEqual({
      type: 'group',
      logic: 'OR',
      children: [
        { type: 'condition', field: 'customer', operator: 'eq', value: ['A-1'] },
        { type: 'condition', field: 'price', operator: 'lt', value: ['3'] },
        { type: 'condition', field: 'files', operator: 'isnotempty' },
      ],
    });
  });

  it('refuses a third level and a group that mixes groups and conditions', () => {
    expect(() => and(where('status', 'in', ['k']), or(where('price', 'gt', 1)))).toThrow(
      'and(): mixes groups and conditions',
    );
    expect(() => or(and(and(where('price', 'gt', 1))))).toThrow(
      'or(): is nested deeper than the two levels the platform reads',
    );
  });

  it('refuses operators the platform does not have, naming the valid ones', () => {
    const err = errorOf(() => where('price', 'gte' as FilterOperator, 3));
    expect(err.message).toContain('"gte" is not a platform operator');
    expect(err.message).toContain('ge');
  });

  it('refuses wrong value shapes while building', () => {
    expect(() => where('price', 'between', 5)).toThrow('needs a [min, max] array of 2 values, got 5');
    expect(() => where('price', 'between', [1, 2, 3])).toThrow(
      'needs a [min, max] array of 2 values, got [1,2,3]',
    );
    expect(() => where('rowid', 'in', [])).toThrow('needs a non-empty array of values, got []');
    expect(() => where('status', 'notin', 'k1')).toThrow('needs a non-empty array of values, got "k1"');
    expect(() => where('customer', 'isempty', '')).toThrow('takes no value, got ""');
    expect(() => where('customer', 'eq')).toThrow(
      'needs a value (use isempty / isnotempty to match empty cells)',
    );
  });

  it('refuses empty groups', () => {
    expect(() => and()).toThrow('and(): needs at least one condition');
    expect(() => or()).toThrow('or(): needs at least one condition');
  });
});

describe('validateFilter', () => {
  for (const family of FAMILIES) {
    it(`accepts exactly the ${family.type} operators`, () => {
      for (const operator of FILTER_OPERATORS) {
        const filter = condition(family.field, operator, valueFor(operator));
        if (family.allowed.includes(operator)) {
          expect(() => validateFilter(filter, structure), `${family.type} ${operator}`).not.toThrow();
          continue;
        }
        const err = errorOf(() => validateFilter(filter, structure));
        expect(err.message).toContain('worksheet "Orders"');
        expect(err.message).toContain(`field "${family.field}" (${family.type})`);
        expect(err.message).toContain(`does not support operator "${operator}"`);
        expect(err.message).toContain(`allowed: ${family.allowed.join(', ')}`);
        expect(err).toMatchObject({
          field: family.field,
          fieldType: family.type,
          operator,
          allowed: family.allowed,
        });
      }
    });
  }

  it('matches fields by id as well as alias', () => {
    expect(() => validateFilter(where('64a000000000000000000002', 'gt', 1), structure)).not.toThrow();
    expect(() => validateFilter(where('64a000000000000000000007', 'isnotempty'), structure)).not.toThrow();
    expect(() => validateFilter(where('64a000000000000000000007', 'contains', 'x'), structure)).toThrow(
      'field "64a000000000000000000007" (RichText) does not support operator "contains"; allowed: isempty, isnotempty',
    );
  });

  it('accepts the system fields with their own operators', () => {
    expect(() => validateFilter(where('rowid', 'in', ['a', 'b']), structure)).not.toThrow();
    expect(() => validateFilter(where('ctime', 'ge', '2024-01-01 00:00:00'), structure)).not.toThrow();
    expect(() => validateFilter(where('ownerid', 'in', ['acc1']), structure)).not.toThrow();
    expect(() => validateFilter(where('autoid', 'between', [1, 100]), structure)).not.toThrow();
    expect(() => validateFilter(where('utime', 'contains', '2024'), structure)).toThrow(
      'field "utime" (system date) does not support operator "contains"; allowed: between, notbetween, isempty, isnotempty, gt, ge, lt, le',
    );
  });

  it('names unknown fields, the fields that exist, and the filter name of v3 system fields', () => {
    const err = errorOf(() =>
      validateFilter(and(where('status', 'in', ['k']), where('prize', 'gt', 1)), structure),
    );
    expect(err.path).toBe('filter.children[1]');
    expect(err.message).toContain(
      'filter on worksheet "Orders" at filter.children[1]: field "prize" is not in the worksheet',
    );
    expect(err.message).toContain('customer, price, status');
    expect(err.message).toContain('64a000000000000000000007'); // a field without alias is listed by id
    expect(err.message).toContain('rowid, ctime, utime');

    expect(() => validateFilter(where('_createdAt', 'ge', '2024-01-01'), structure)).toThrow(
      'field "_createdAt" is not in the worksheet (filters name this system field "ctime")',
    );
    expect(() => validateFilter(where('id', 'in', ['r1']), structure)).toThrow(
      '(filters name this system field "rowid")',
    );
  });

  it('refuses fields whose type rowbridge does not know', () => {
    const err = errorOf(() => validateFilter(where('future', 'eq', 1), structure));
    expect(err.message).toContain('field "future" has type "99", which rowbridge does not know');
  });

  it('checks value shapes of filters that did not come from the builder (a job spec)', () => {
    expect(() => validateFilter(condition('price', 'between', [1]), structure)).toThrow(
      'field "price" (Number) with operator "between" needs a [min, max] array of 2 values, got [1]',
    );
    expect(() => validateFilter(condition('status', 'in', 'k1'), structure)).toThrow(
      'field "status" (SingleSelect) with operator "in" needs a non-empty array of values, got "k1"',
    );
    expect(() => validateFilter(condition('files', 'isempty', true), structure)).toThrow(
      'field "files" (Attachment) with operator "isempty" takes no value, got true',
    );
    expect(() => validateFilter(condition('customer', 'eq'), structure)).toThrow('"eq" needs a value');
  });

  it('checks the group structure and reports the path of the bad node', () => {
    const bad = { type: 'group', logic: 'XOR', children: [] } as unknown as Filter;
    expect(() => validateFilter(bad, structure)).toThrow(
      'at filter: group logic must be "AND" or "OR", got "XOR"',
    );
    const empty = { type: 'group', logic: 'AND', children: [] } as unknown as Filter;
    expect(() => validateFilter(empty, structure)).toThrow('a group needs a non-empty children array');
    const nested = {
      type: 'group',
      logic: 'OR',
      children: [
        { type: 'group', logic: 'AND', children: [where('price', 'gt', 1)] },
        { type: 'group', logic: 'AND', children: [{ type: 'cond' }] },
      ],
    } as unknown as Filter;
    const err = errorOf(() => validateFilter(nested, structure));
    expect(err.path).toBe('filter.children[1].children[0]');
    expect(err.message).toContain('type must be "condition" or "group", got "cond"');
  });

  it('refuses filters deeper than two levels or mixing groups and conditions (the platform would drop them)', () => {
    const deep = {
      type: 'group',
      logic: 'AND',
      children: [
        {
          type: 'group',
          logic: 'OR',
          children: [{ type: 'group', logic: 'AND', children: [where('price', 'gt', 1)] }],
        },
      ],
    } as unknown as Filter;
    const err = errorOf(() => validateFilter(deep, structure, 'source.filter'));
    expect(err.path).toBe('source.filter.children[0]');
    expect(err.message).toBe(
      'filter on worksheet "Orders" at source.filter.children[0]: the group is nested deeper than the two levels the platform reads (group, group, condition)',
    );
    const mixed = {
      type: 'group',
      logic: 'AND',
      children: [
        where('price', 'gt', 1),
        { type: 'group', logic: 'OR', children: [where('price', 'lt', 9)] },
      ],
    } as unknown as Filter;
    expect(() => validateFilter(mixed, structure)).toThrow(
      'at filter: the group mixes groups and conditions; the children of one group must be all groups or all conditions',
    );
    const twoLevels = {
      type: 'group',
      logic: 'OR',
      children: [
        { type: 'group', logic: 'AND', children: [where('price', 'gt', 1), where('area', 'in', ['310000'])] },
      ],
    } as unknown as Filter;
    expect(() => validateFilter(twoLevels, structure)).not.toThrow();
  });

  it('is a config error, so a run with a bad filter stops instead of retrying', () => {
    const err = errorOf(() => validateFilter(where('price', 'contains', '1'), structure));
    expect(err).toBeInstanceOf(ConfigError);
    expect(classifyError(err)).toBe('config');
  });
});
