import { describe, expect, it } from 'vitest';
import type { WorksheetField } from '../../../../src/api/types.ts';
import { mapRecord } from '../../../../src/sync/mapping/map-record.ts';
import type { MapResult } from '../../../../src/sync/mapping/map-result.ts';
import { validateMapping } from '../../../../src/sync/mapping/validate-mapping.ts';
import type { FieldMapping } from '../../../../src/sync/model/types.ts';

const status: WorksheetField = {
  id: 'f_status',
  name: 'Status',
  alias: 'status',
  type: 'SingleSelect',
  options: [
    { key: 'k-open', value: 'Open', index: 1 },
    { key: 'k-closed', value: 'Closed', index: 2 },
    { key: 'k-old', value: 'Archived', index: 3, isDeleted: true },
  ],
};
const size: WorksheetField = {
  id: 'f_size',
  name: 'Size',
  alias: 'size',
  type: '11',
  options: [
    { key: 'k-s', value: 'S' },
    { key: 'k-m', value: 'M' },
  ],
};
const tags: WorksheetField = {
  id: 'f_tags',
  name: 'Tags',
  alias: 'tags',
  type: 'MultipleSelect',
  options: [
    { key: 'k-red', value: 'Red' },
    { key: 'k-green', value: 'Green' },
    { key: 'k-blue', value: 'Blue' },
    { key: 'k-rnd', value: 'Research, Development' },
  ],
};
const manyOptions: WorksheetField = {
  id: 'f_many',
  name: 'Many',
  alias: 'many',
  type: 'SingleSelect',
  options: Array.from({ length: 14 }, (_, i) => ({ key: `k${i}`, value: `Option ${i}` })),
};
const files: WorksheetField = { id: 'f_files', name: 'Files', alias: 'files', type: 'Attachment' };
const owner: WorksheetField = { id: 'f_owner', name: 'Owner', alias: 'owner', type: 'Collaborator' };
const dept: WorksheetField = { id: 'f_dept', name: 'Department', alias: 'dept', type: 'Department' };
const customer: WorksheetField = {
  id: 'f_cust',
  name: 'Customer',
  alias: 'customer',
  type: 'Relation',
  dataSource: 'ws_customers',
};

function mapOne(field: WorksheetField, raw: unknown, mapping: Partial<FieldMapping> = {}): MapResult {
  const plan = validateMapping(
    [{ target: field.alias ?? field.id, from: 'col', ...mapping }],
    { id: 'ws', name: 'Sheet', fields: [field] },
    { mode: 'append' },
  );
  return mapRecord(plan, { col: raw });
}

function fieldOf(result: MapResult) {
  if (!result.ok) throw new Error(`rejected: ${JSON.stringify(result.errors)}`);
  return result.fields[0]!;
}

function reasonOf(result: MapResult): string {
  if (result.ok) throw new Error(`accepted: ${JSON.stringify(result.fields)}`);
  expect(result.errors[0]).toMatchObject({ column: 'col' });
  return result.errors[0]!.reason;
}

describe('single select and dropdown', () => {
  it('writes [key] from option text in any case, or from the key itself', () => {
    expect(fieldOf(mapOne(status, 'open'))).toEqual({ id: 'f_status', value: ['k-open'] });
    expect(fieldOf(mapOne(status, ' CLOSED '))).toEqual({ id: 'f_status', value: ['k-closed'] });
    expect(fieldOf(mapOne(status, 'k-closed')).value).toEqual(['k-closed']);
    expect(fieldOf(mapOne(size, ['m'])).value).toEqual(['k-m']);
  });

  it('rejects an unknown or deleted option, listing the allowed ones', () => {
    expect(reasonOf(mapOne(status, 'Pending'))).toBe('no option "Pending"; allowed: "Open", "Closed"');
    expect(reasonOf(mapOne(status, 'Archived'))).toMatch(/no option "Archived"/);
    expect(reasonOf(mapOne(status, 'k-old'))).toMatch(/no option/);
  });

  it('lists only the first ten allowed options', () => {
    const reason = reasonOf(mapOne(manyOptions, 'nope'));
    expect(reason).toContain('"Option 9"');
    expect(reason).not.toContain('"Option 10"');
    expect(reason).toContain('(and 4 more)');
  });

  it('rejects several values for a single select', () => {
    expect(reasonOf(mapOne(status, ['Open', 'Closed']))).toMatch(/several values .* single-select/);
    expect(reasonOf(mapOne(status, 'Open;Closed'))).toMatch(/several values/);
  });

  it('sends an unknown text with type "2" when createOptions is set', () => {
    expect(fieldOf(mapOne(status, 'Pending', { createOptions: true }))).toEqual({
      id: 'f_status',
      value: ['Pending'],
      type: '2',
    });
    expect(fieldOf(mapOne(status, 'open', { createOptions: true }))).toEqual({
      id: 'f_status',
      value: ['k-open'],
    });
  });
});

describe('multiple select', () => {
  it('splits strings on "," and ";", trims and de-duplicates', () => {
    expect(fieldOf(mapOne(tags, 'red; Blue ,green,RED')).value).toEqual(['k-red', 'k-blue', 'k-green']);
    expect(fieldOf(mapOne(tags, ['Green', 'k-blue'])).value).toEqual(['k-green', 'k-blue']);
  });

  it('matches an option whose own text contains a separator as a whole', () => {
    expect(fieldOf(mapOne(tags, 'research, development')).value).toEqual(['k-rnd']);
  });

  it('rejects unknown texts, naming each', () => {
    expect(reasonOf(mapOne(tags, 'Red, Purple, Pink'))).toMatch(
      /^no option "Purple", "Pink"; allowed: "Red"/,
    );
    expect(reasonOf(mapOne(tags, [{ x: 1 }]))).toMatch(/got an object in the list/);
  });

  it('with createOptions sends every value as text with type "2"', () => {
    expect(fieldOf(mapOne(tags, 'red, Purple', { createOptions: true }))).toEqual({
      id: 'f_tags',
      value: ['Red', 'Purple'],
      type: '2',
    });
  });
});

describe('attachments', () => {
  it('turns URLs into [{name, url}] written with type "0" (replace)', () => {
    expect(fieldOf(mapOne(files, 'https://cdn.example.com/docs/Q1%20report.pdf?sig=abc'))).toEqual({
      id: 'f_files',
      value: [{ name: 'Q1 report.pdf', url: 'https://cdn.example.com/docs/Q1%20report.pdf?sig=abc' }],
      type: '0',
    });
    expect(
      fieldOf(mapOne(files, ['http://a.example/x.png', { url: 'https://b.example/y', name: 'Photo.jpg' }]))
        .value,
    ).toEqual([
      { name: 'x.png', url: 'http://a.example/x.png' },
      { name: 'Photo.jpg', url: 'https://b.example/y' },
    ]);
  });

  it('rejects non-URLs and non-http schemes', () => {
    expect(reasonOf(mapOne(files, 'report.pdf'))).toMatch(/not a URL/);
    expect(reasonOf(mapOne(files, 'file:///etc/passwd'))).toMatch(/unsupported URL scheme file:/);
    expect(reasonOf(mapOne(files, 42))).toMatch(/expected a URL/);
  });

  it('clears with [] and still says replace', () => {
    expect(fieldOf(mapOne(files, ''))).toEqual({ id: 'f_files', value: [], type: '0' });
  });
});

describe('members, departments and relations without lookups', () => {
  it('writes account ids as given by default', () => {
    expect(fieldOf(mapOne(owner, 'acc-1; acc-2')).value).toEqual(['acc-1', 'acc-2']);
  });

  it('writes department ids as given without lookupBy', () => {
    expect(fieldOf(mapOne(dept, ['d-1'])).value).toEqual(['d-1']);
  });

  it('writes row ids as given with relationKey "rowid"', () => {
    const result = mapOne(customer, 'row-9', { relationKey: 'rowid' });
    expect(fieldOf(result).value).toEqual(['row-9']);
    expect(result.ok && result.pending).toBeFalsy();
  });

  it('rejects objects where ids are expected', () => {
    expect(reasonOf(mapOne(owner, [{ id: 1 }]))).toMatch(/expected ids or names as text/);
  });
});
