import { describe, expect, it } from 'vitest';
import { keysFilter } from '../../../../src/sync/write/create-sync-context.ts';
import { composeKey, keyParts } from '../../../../src/sync/mapping/compose-key.ts';

describe('composite keys', () => {
  it('a single key keeps its plain form (indexes of earlier runs stay valid); several parts become one JSON array', () => {
    expect(composeKey(['C-1'])).toBe('C-1');
    expect(composeKey(['C-1', 'north'])).toBe('["C-1","north"]');
    // A value holding what a separator would be cannot fake another combination.
    expect(composeKey(['a","b', 'c'])).not.toBe(composeKey(['a', 'b","c']));
    expect(keyParts(composeKey(['a","b', 'c'])!, 2)).toEqual(['a","b', 'c']);
  });

  it('an empty part makes no key', () => {
    expect(composeKey(['C-1', ''])).toBeUndefined();
    expect(composeKey([])).toBeUndefined();
  });

  it('looks rows up by their combinations: an OR of AND groups, the two levels the platform allows', () => {
    expect(
      keysFilter(['f_c', 'f_r'], [composeKey(['C-1', 'north'])!, composeKey(['C-2', 'south'])!]),
    ).toEqual({
      type: 'group',
      logic: 'OR',
      children: [
        {
          type: 'group',
          logic: 'AND',
          children: [
            { type: 'condition', field: 'f_c', operator: 'eq', value: 'C-1' },
            { type: 'condition', field: 'f_r', operator: 'eq', value: 'north' },
          ],
        },
        {
          type: 'group',
          logic: 'AND',
          children: [
            { type: 'condition', field: 'f_c', operator: 'eq', value: 'C-2' },
            { type: 'condition', field: 'f_r', operator: 'eq', value: 'south' },
          ],
        },
      ],
    });
    expect(keysFilter(['f_c'], ['C-1'])).toEqual({
      type: 'group',
      logic: 'OR',
      children: [{ type: 'condition', field: 'f_c', operator: 'eq', value: 'C-1' }],
    });
  });
});
