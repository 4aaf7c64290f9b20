import { describe, expect, it } from 'vitest';
import type { WorksheetStructure } from '../../../../src/api/types.ts';
import { snapshotOf, structureDrift } from '../../../../src/sync/prepare/schema-drift.ts';

const before: WorksheetStructure = {
  id: 'ws1',
  name: 'Customers',
  fields: [
    { id: 'f1', name: 'No', alias: 'no', type: 'Text', required: true },
    {
      id: 'f2',
      name: 'Tier',
      alias: 'tier',
      type: 'SingleSelect',
      options: [
        { key: 'k-g', value: 'Gold' },
        { key: 'k-s', value: 'Silver' },
      ],
    },
    { id: 'f3', name: 'Spend', alias: 'spend', type: 'Number' },
    { id: 'f4', name: 'Note', alias: 'note', type: 'Text' },
  ],
};
const mappings = [
  { target: 'no', from: 'no' },
  { target: 'tier', from: 'tier' },
  { target: 'spend', from: 'spend' },
];

const change = (
  edit: (fields: WorksheetStructure['fields']) => WorksheetStructure['fields'],
): WorksheetStructure => ({
  ...before,
  fields: edit(before.fields.map((f) => ({ ...f }))),
});

describe('schema drift since the last successful run', () => {
  const snapshot = snapshotOf(before, mappings);

  it('finds nothing when nothing the mapping uses changed (an unmapped field may change freely)', () => {
    expect(structureDrift(snapshot, before, mappings, true)).toEqual([]);
    expect(
      structureDrift(
        snapshot,
        change((fs) => fs.filter((f) => f.id !== 'f4')),
        mappings,
        true,
      ),
    ).toEqual([]);
  });

  it('names a mapped field that was deleted', () => {
    expect(
      structureDrift(
        snapshot,
        change((fs) => fs.filter((f) => f.id !== 'f3')),
        mappings,
        true,
      ),
    ).toEqual(['spend: field "Spend" (f3) was deleted from the worksheet since the last successful run']);
  });

  it('names a mapped field whose type changed, whatever form the type is given in', () => {
    const retyped = change((fs) => fs.map((f) => (f.id === 'f3' ? { ...f, type: '2' } : f)));
    expect(structureDrift(snapshot, retyped, mappings, true)).toEqual([
      'spend: field "Spend" changed type from Number to Text since the last successful run',
    ]);
    expect(
      structureDrift(
        snapshot,
        change((fs) => fs.map((f) => (f.id === 'f3' ? { ...f, type: '6' } : f))),
        mappings,
        true,
      ),
    ).toEqual([]);
  });

  it('names a deleted option of a mapped select (removed or flagged isDeleted), unless the mapping creates options', () => {
    const flagged = change((fs) =>
      fs.map((f) =>
        f.id === 'f2'
          ? {
              ...f,
              options: [
                { key: 'k-g', value: 'Gold', isDeleted: true },
                { key: 'k-s', value: 'Silver' },
              ],
            }
          : f,
      ),
    );
    expect(structureDrift(snapshot, flagged, mappings, true)).toEqual([
      'tier: option "Gold" of field "Tier" was deleted since the last successful run; rows that still use it would be refused (restore the option, or set createOptions)',
    ]);
    const creating = mappings.map((m) => (m.target === 'tier' ? { ...m, createOptions: true } : m));
    expect(structureDrift(snapshotOf(before, creating), flagged, creating, true)).toEqual([]);
  });

  it('names a new required field the mapping does not fill, when the job creates rows', () => {
    const added = change((fs) => [
      ...fs,
      { id: 'f5', name: 'Region', alias: 'region', type: 'Text', required: true },
    ]);
    expect(structureDrift(snapshot, added, mappings, true)).toEqual([
      'region: field "Region" is new and required since the last successful run, and the mapping does not fill it',
    ]);
    expect(structureDrift(snapshot, added, mappings, false)).toEqual([]);
    const withRegion = [...mappings, { target: 'region', from: 'r' }];
    expect(structureDrift(snapshotOf(before, withRegion), added, withRegion, true)).toEqual([]);
  });

  it('takes an edited mapping as reviewed against the new structure', () => {
    const retyped = change((fs) => fs.map((f) => (f.id === 'f3' ? { ...f, type: 'Text' } : f)));
    expect(structureDrift(snapshot, retyped, mappings, true)).toHaveLength(1);
    const edited = mappings.map((m) => (m.target === 'spend' ? { ...m, from: 'spend_text' } : m));
    expect(structureDrift(snapshot, retyped, edited, true)).toEqual([]);
  });
});
