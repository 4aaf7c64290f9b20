import { describe, expect, it } from 'vitest';
import type { FieldValue, WorksheetStructure } from '../../../../src/api/types.ts';
import { groupChangeSets } from '../../../../src/sync/mapping/group-change-sets.ts';
import { mapRecord } from '../../../../src/sync/mapping/map-record.ts';
import type { MapResult } from '../../../../src/sync/mapping/map-result.ts';
import { keyOfRow, rowMatches } from '../../../../src/sync/mapping/row-matches.ts';
import { validateMapping } from '../../../../src/sync/mapping/validate-mapping.ts';
import type { NormalisedRow } from '../../../../src/api/types.ts';
import type { FieldMapping } from '../../../../src/sync/model/types.ts';

const structure: WorksheetStructure = {
  id: 'ws',
  name: 'Products',
  fields: [
    { id: 'f_sku', name: 'SKU', alias: 'sku', type: 'Text' },
    { id: 'f_price', name: 'Price', alias: 'price', type: 'Currency', precision: 2 },
    { id: 'f_active', name: 'Active', alias: 'active', type: 'Checkbox' },
    {
      id: 'f_status',
      name: 'Status',
      alias: 'status',
      type: 'Dropdown',
      options: [
        { key: 'k-on', value: 'On sale' },
        { key: 'k-off', value: 'Withdrawn' },
      ],
    },
    {
      id: 'f_tags',
      name: 'Tags',
      alias: 'tags',
      type: 'MultipleSelect',
      options: [
        { key: 'k-a', value: 'A' },
        { key: 'k-b', value: 'B' },
      ],
    },
    { id: 'f_since', name: 'Since', alias: 'since', type: 'Date' },
    { id: 'f_seen', name: 'Seen', alias: 'seen', type: 'DateTime' },
    { id: 'f_opens', name: 'Opens', alias: 'opens', type: 'Time' },
    { id: 'f_maker', name: 'Maker', alias: 'maker', type: 'Relation', dataSource: 'ws_makers' },
    { id: 'f_owner', name: 'Owner', alias: 'owner', type: 'Collaborator' },
    { id: 'f_count', name: 'Count', alias: 'count', type: 'Number' },
  ],
};

const mappings: FieldMapping[] = [
  { target: 'sku', from: 'sku' },
  { target: 'price', from: 'price' },
  { target: 'active', from: 'active' },
  { target: 'status', from: 'status' },
  { target: 'tags', from: 'tags' },
  { target: 'since', from: 'since' },
  { target: 'seen', from: 'seen' },
  { target: 'opens', from: 'opens' },
  { target: 'maker', from: 'maker', relationKey: 'rowid' },
  { target: 'owner', from: 'owner' },
  { target: 'count', from: 'count' },
];
const plan = validateMapping(mappings, structure, { mode: 'upsert', key: 'sku' });

const csvRecord = {
  sku: 'P-1',
  price: '9.99',
  active: 'yes',
  status: 'on sale',
  tags: 'B; A',
  since: '2024-01-31',
  seen: '2024-07-01 12:00:00',
  opens: '9:00',
  maker: 'row-m1',
  owner: 'acc-1',
  count: '1,000',
};
const jsonRecord = {
  count: 1000,
  owner: ['acc-1'],
  maker: ['row-m1'],
  opens: '09:00:00',
  seen: '2024-07-01T12:00:00Z',
  since: '2024-01-31',
  tags: ['a', 'k-b'],
  status: 'k-on',
  active: true,
  price: 9.99,
  sku: 'P-1',
};

function mapped(data: Record<string, unknown>): Extract<MapResult, { ok: true }> {
  const result = mapRecord(plan, data);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result;
}

function row(values: Record<string, unknown>): NormalisedRow {
  return { id: 'row-1', values, system: {} };
}

describe('content hash', () => {
  it('is equal for the same content from CSV strings and typed JSON in another key order', () => {
    expect(mapped(jsonRecord).hash).toBe(mapped(csvRecord).hash);
  });

  it('changes when any field changes, and when the mapping changes', () => {
    const base = mapped(csvRecord).hash;
    expect(mapped({ ...csvRecord, price: '9.98' }).hash).not.toBe(base);
    expect(mapped({ ...csvRecord, tags: 'A' }).hash).not.toBe(base);
    const otherPlan = validateMapping(
      mappings.map((m) => (m.target === 'seen' ? { ...m, timezone: 'UTC' } : m)),
      structure,
      { mode: 'upsert', key: 'sku' },
    );
    const other = mapRecord(otherPlan, csvRecord);
    expect(other.ok && other.hash).not.toBe(base);
  });

  it('is stable across runs (same input, same string)', () => {
    const again = validateMapping(mappings, structure, { mode: 'upsert', key: 'sku' });
    const result = mapRecord(again, csvRecord);
    expect(result.ok && result.hash).toBe(mapped(csvRecord).hash);
  });

  it('gives the canonical key', () => {
    expect(mapped(csvRecord).key).toBe('P-1');
  });
});

describe('rowMatches', () => {
  const fields = mapped(csvRecord).fields;

  it('finds an unchanged row equal in every read form, keyed by field id or alias', () => {
    const existing = row({
      f_sku: 'P-1',
      price: '9.990', // reads return numbers as strings
      f_active: '1', // Checkbox reads "1"/"0"
      status: [{ key: 'k-on', value: 'On sale' }],
      f_tags: '["k-a","k-b"]', // JSON string of keys
      f_since: '2024-01-31',
      seen: '2024-07-01T12:00:00.000Z',
      opens: '09:00',
      f_maker: [{ sid: 'row-m1', name: 'Maker One' }],
      owner: [{ accountId: 'acc-1', fullname: 'Ana' }],
      count: '1000',
    });
    expect(rowMatches(plan, fields, existing)).toEqual({ same: true, changed: [] });
  });

  it('accepts key arrays, JSON strings of {key,value} and bare ids as well', () => {
    const existing = row({
      sku: 'P-1',
      price: 9.99,
      active: true,
      status: ['k-on'],
      tags: JSON.stringify([
        { key: 'k-b', value: 'B' },
        { key: 'k-a', value: 'A' },
      ]),
      since: '2024-01-31 00:00:00',
      seen: '2024-07-01 12:00',
      opens: '09:00:00',
      maker: ['row-m1'],
      owner: '["acc-1"]',
      count: 1000,
    });
    expect(rowMatches(plan, fields, existing).same).toBe(true);
  });

  it('lists only the fields that really changed', () => {
    const existing = row({
      sku: 'P-1',
      price: '10.00',
      active: '0',
      status: ['k-on'],
      tags: ['k-a'],
      since: '2024-01-31',
      seen: '2024-07-01 12:00:00',
      opens: '09:00:00',
      maker: [{ sid: 'row-m2', name: 'Other' }],
      owner: [{ accountId: 'acc-1' }],
      count: '1000',
    });
    const result = rowMatches(plan, fields, existing);
    expect(result.same).toBe(false);
    expect(result.changed.map((f) => f.id)).toEqual(['f_price', 'f_active', 'f_tags', 'f_maker']);
  });

  it('treats a missing or null read as empty', () => {
    const cleared = mapped({ sku: 'P-1' }).fields;
    expect(
      rowMatches(plan, cleared, row({ sku: 'P-1', price: null, active: '0', tags: '[]', maker: [] })).same,
    ).toBe(true);
    expect(rowMatches(plan, fields, row({ sku: 'P-1' })).changed).toHaveLength(fields.length - 1);
  });

  it('compares a Currency at its precision, as the platform stores it', () => {
    const [price] = mapped({ ...csvRecord, price: '9.999' }).fields.filter((f) => f.id === 'f_price');
    expect(rowMatches(plan, [price!], row({ price: '10.00' })).same).toBe(true);
  });

  it('matches options created by the sync (type "2") by their text', () => {
    const creating = validateMapping([{ target: 'tags', from: 't', createOptions: true }], structure, {
      mode: 'append',
    });
    const result = mapRecord(creating, { t: 'A, New' });
    if (!result.ok) throw new Error('rejected');
    expect(result.fields[0]).toEqual({ id: 'f_tags', value: ['A', 'New'], type: '2' });
    const readBack = row({
      tags: [
        { key: 'k-a', value: 'A' },
        { key: 'k-created', value: 'new' },
      ],
    });
    expect(rowMatches(creating, result.fields, readBack).same).toBe(true);
    expect(rowMatches(creating, result.fields, row({ tags: ['k-a'] })).same).toBe(false);
  });

  it('reads keys of existing rows the same way as mapped keys', () => {
    const numericKey = validateMapping([{ target: 'count', from: 'c' }], structure, {
      mode: 'update',
      key: 'count',
    });
    const result = mapRecord(numericKey, { c: '1,000' });
    expect(result.ok && result.key).toBe('1000');
    expect(keyOfRow(numericKey, row({ count: '1000.00' }))).toBe('1000');
    expect(keyOfRow(numericKey, row({ count: null }))).toBeUndefined();
  });
});

describe('groupChangeSets', () => {
  const price = (value: number): FieldValue => ({ id: 'f_price', value });
  const status = (key: string): FieldValue => ({ id: 'f_status', value: [key] });

  it('groups rows with identical change sets, whatever the field order', () => {
    const groups = groupChangeSets([
      { rowId: 'r1', changed: [price(5), status('k-on')] },
      { rowId: 'r2', changed: [status('k-on'), price(5)] },
      { rowId: 'r3', changed: [price(6), status('k-on')] },
      { rowId: 'r4', changed: [price(5)] },
      { rowId: 'r5', changed: [price(5), status('k-on')] },
    ]);
    expect(groups).toEqual([
      { fields: [price(5), status('k-on')], rowIds: ['r1', 'r2', 'r5'] },
      { fields: [price(6), status('k-on')], rowIds: ['r3'] },
      { fields: [price(5)], rowIds: ['r4'] },
    ]);
  });

  it('keeps field-value types apart and drops empty change sets', () => {
    const groups = groupChangeSets([
      { rowId: 'r1', changed: [{ id: 'f_tags', value: ['New'], type: '2' }] },
      { rowId: 'r2', changed: [{ id: 'f_tags', value: ['New'] }] },
      { rowId: 'r3', changed: [] },
    ]);
    expect(groups.map((g) => g.rowIds)).toEqual([['r1'], ['r2']]);
  });
});

describe('attachments compare by file name, in the read shape the platform answers with', () => {
  const withFiles: WorksheetStructure = {
    id: 'ws',
    name: 'Docs',
    fields: [
      { id: 'f_no', name: 'No', alias: 'no', type: 'Text' },
      { id: 'f_files', name: 'Files', alias: 'files', type: 'Attachment' },
    ],
  };
  const filePlan = validateMapping(
    [
      { target: 'no', from: 'no' },
      { target: 'files', from: 'files' },
    ],
    withFiles,
    { mode: 'upsert', key: 'no' },
  );
  const written = mapRecord(filePlan, { no: '1', files: 'https://src.example/docs/site-plan.pdf' });
  if (!written.ok) throw new Error('mapping failed');

  it('an unchanged attachment (read back as file_name + downloadUrl) is not uploaded again', () => {
    const read = row({
      f_no: '1',
      files: [
        {
          file_id: 'x',
          file_name: 'site-plan.pdf',
          file_size: 1024,
          downloadUrl: 'https://platform.example/dl/x',
        },
      ],
    });
    expect(rowMatches(filePlan, written.fields, read).same).toBe(true);
  });

  it('a different file name is a change', () => {
    const read = row({
      f_no: '1',
      files: [{ file_id: 'y', file_name: 'old.pdf', downloadUrl: 'https://platform.example/dl/y' }],
    });
    expect(rowMatches(filePlan, written.fields, read).changed.map((f) => f.id)).toEqual(['f_files']);
  });
});
