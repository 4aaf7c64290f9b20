/**
 * A Relation field as (part of) the key: refused for a one-way job, which looks rows up by
 * the key's value; allowed for a two-way job (`relationKeys`), which matches records by
 * their related rows' keys (issue 25).
 */
import { describe, expect, it } from 'vitest';
import type { WorksheetStructure } from '../../../../src/api/types.ts';
import { validateMapping } from '../../../../src/sync/mapping/validate-mapping.ts';

const structure: WorksheetStructure = {
  id: 'ws_lines',
  name: 'Lines',
  fields: [
    { id: '64a000000000000000000001', name: 'Ref', alias: 'ref', type: 'Text' },
    {
      id: '64a000000000000000000002',
      name: 'Customer',
      alias: 'customer',
      type: 'Relation',
      dataSource: 'ws_c',
    },
  ],
};
const mappings = [
  { target: 'ref', from: 'ref' },
  { target: 'customer', from: 'customer', relationKey: 'code' },
];

describe('a relation in the key', () => {
  it('is refused unless relationKeys, and then is a key part like any other', () => {
    expect(() => validateMapping(mappings, structure, { mode: 'upsert', key: ['customer', 'ref'] })).toThrow(
      /a Relation field cannot be the key/,
    );
    const plan = validateMapping(mappings, structure, {
      mode: 'upsert',
      key: ['customer', 'ref'],
      relationKeys: true,
    });
    expect(plan.keyIndexes.map((i) => plan.fields[i]!.alias)).toEqual(['customer', 'ref']);
  });
});
