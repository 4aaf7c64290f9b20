import { describe, expect, it } from 'vitest';
import {
  createRowNormaliser,
  normaliseRow,
  parsePlatformTimestamp,
} from '../../../../src/api/rows/normalise-row.ts';
import { readUserRef } from '../../../../src/api/rows/read-user-ref.ts';
import { RowShapeError } from '../../../../src/api/rows/row-errors.ts';
import type { WireRow, WorksheetStructure } from '../../../../src/api/types.ts';

const NAME_ID = '64a000000000000000000001';
const PRICE_ID = '64a000000000000000000002';
const NOTES_ID = '64a000000000000000000003';

const structure: WorksheetStructure = {
  id: 'ws1',
  name: 'Orders',
  fields: [
    { id: NAME_ID, name: 'Name', alias: 'name', type: 'Text' },
    { id: PRICE_ID, name: 'Price', alias: 'price', type: 'Number' },
    { id: NOTES_ID, name: 'Notes', type: 'RichText' },
  ],
};

const specRow: WireRow = {
  id: 'row-1',
  fields: [
    { id: NAME_ID, value: 'Ada', type: 'Text', controlName: 'Name' },
    { id: PRICE_ID, value: '9.99', type: 'Number', controlName: 'Price' },
  ],
  _createdAt: '2024-03-25T07:52:58.123Z',
  _updatedAt: '2024-03-26T08:00:00.000Z',
  _createdBy: { accountId: 'acc-1', fullname: 'Ada Lovelace' },
  _updatedBy: { accountId: 'acc-2', fullname: 'Bob' },
  _owner: { accountId: 'acc-1', fullname: 'Ada Lovelace' },
  _processStatus: 'running',
};

describe('normaliseRow', () => {
  it("reads the spec's shape, keying values by field id and alias", () => {
    const row = normaliseRow(specRow, structure);
    expect(row).toEqual({
      id: 'row-1',
      values: { [NAME_ID]: 'Ada', name: 'Ada', [PRICE_ID]: '9.99', price: '9.99' },
      createdAt: new Date('2024-03-25T07:52:58.123Z'),
      updatedAt: new Date('2024-03-26T08:00:00.000Z'),
      createdBy: { accountId: 'acc-1', fullname: 'Ada Lovelace' },
      updatedBy: { accountId: 'acc-2', fullname: 'Bob' },
      owner: { accountId: 'acc-1', fullname: 'Ada Lovelace' },
      system: { _processStatus: 'running' },
    });
  });

  it("without a structure, keys the spec shape's values by field id", () => {
    const row = normaliseRow(specRow);
    expect(row.values).toEqual({ [NAME_ID]: 'Ada', [PRICE_ID]: '9.99' });
  });

  it('reads the flat shape keyed by alias, with the earlier system names', () => {
    const flat: WireRow = {
      rowid: 'row-2',
      name: 'Grace',
      price: '12',
      ctime: '2024-03-25 15:52:58',
      utime: '2024-03-25 16:00:00',
      caid: '{"accountId":"acc-3","fullname":"Grace Hopper"}',
      uaid: 'acc-4',
      ownerid: { accountId: 'acc-3', fullname: 'Grace Hopper' },
      wfstatus: 'pass',
      autoid: 17,
    };
    const row = normaliseRow(flat, structure, { timeZone: 'Asia/Shanghai' });
    expect(row).toEqual({
      id: 'row-2',
      values: { [NAME_ID]: 'Grace', name: 'Grace', [PRICE_ID]: '12', price: '12' },
      createdAt: new Date('2024-03-25T07:52:58.000Z'),
      updatedAt: new Date('2024-03-25T08:00:00.000Z'),
      createdBy: { accountId: 'acc-3', fullname: 'Grace Hopper' },
      updatedBy: { accountId: 'acc-4' },
      owner: { accountId: 'acc-3', fullname: 'Grace Hopper' },
      system: { _processStatus: 'pass', _autoId: 17 },
    });
  });

  it('reads the flat shape keyed by field id (useFieldIdAsKey), with v3 system names and "id"', () => {
    const flat: WireRow = {
      id: 'row-3',
      [NAME_ID]: 'Linus',
      [NOTES_ID]: '<p>hi</p>',
      _createdAt: '2024-03-25T07:52:58.123Z',
      _owner: [{ accountId: 'acc-5', fullname: 'Linus' }],
    };
    const row = normaliseRow(flat, structure);
    expect(row.id).toBe('row-3');
    // Notes has no alias, so it is only under its id.
    expect(row.values).toEqual({ [NAME_ID]: 'Linus', name: 'Linus', [NOTES_ID]: '<p>hi</p>' });
    expect(row.createdAt?.toISOString()).toBe('2024-03-25T07:52:58.123Z');
    expect(row.owner).toEqual({ accountId: 'acc-5', fullname: 'Linus' });
    expect(row.updatedAt).toBeUndefined();
    expect('updatedAt' in row).toBe(false);
  });

  it('gives both shapes of the same row the same normalised form', () => {
    const flat: WireRow = {
      rowid: 'row-1',
      name: 'Ada',
      price: '9.99',
      ctime: '2024-03-25 07:52:58.123',
      utime: '2024-03-26T08:00:00Z',
      caid: 'acc-1',
      uaid: 'acc-2',
      ownerid: 'acc-1',
      _processStatus: 'running',
    };
    const fromFlat = normaliseRow(flat, structure);
    const fromSpec = normaliseRow(specRow, structure);
    expect(fromFlat.values).toEqual(fromSpec.values);
    expect(fromFlat.createdAt).toEqual(fromSpec.createdAt);
    expect(fromFlat.updatedAt).toEqual(fromSpec.updatedAt);
    expect(fromFlat.owner?.accountId).toBe(fromSpec.owner?.accountId);
    expect(fromFlat.system).toEqual(fromSpec.system);
  });

  it('keeps keys the structure does not know (a field added since it was read)', () => {
    const row = normaliseRow({ rowid: 'r', name: 'x', brandNew: 5 }, structure);
    expect(row.values).toEqual({ [NAME_ID]: 'x', name: 'x', brandNew: 5 });
  });

  it('prefers the v3 system name when a row carries both spellings', () => {
    const row = normaliseRow({
      rowid: 'r',
      _createdAt: '2024-01-02T00:00:00Z',
      ctime: '2023-01-01 00:00:00',
    });
    expect(row.createdAt?.toISOString()).toBe('2024-01-02T00:00:00.000Z');
    const reversed = normaliseRow({
      rowid: 'r',
      ctime: '2023-01-01 00:00:00',
      _createdAt: '2024-01-02T00:00:00Z',
    });
    expect(reversed.createdAt?.toISOString()).toBe('2024-01-02T00:00:00.000Z');
  });

  it('tells a flat field aliased "fields" from the spec shape when the structure has it', () => {
    const withFieldsAlias: WorksheetStructure = {
      ...structure,
      fields: [
        ...structure.fields,
        { id: '64a000000000000000000009', name: 'F', alias: 'fields', type: 'Text' },
      ],
    };
    const row = normaliseRow({ rowid: 'r', fields: [] }, withFieldsAlias);
    expect(row.values).toEqual({ '64a000000000000000000009': [], fields: [] });
  });

  it('treats empty system values as absent', () => {
    const row = normaliseRow({ rowid: 'r', ctime: '', caid: null, ownerid: { accountId: '', fullname: '' } });
    expect(row).toEqual({ id: 'r', values: {}, system: {} });
  });

  it('does not let a "__proto__" key from JSON change the prototype of values or system', () => {
    const flat = normaliseRow(JSON.parse('{"rowid":"r","__proto__":{"polluted":true}}') as WireRow);
    expect(Object.getPrototypeOf(flat.system)).toBe(Object.prototype);
    expect((flat.system as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(flat.system)).toEqual(['__proto__']);

    const spec = normaliseRow(
      JSON.parse('{"id":"r","fields":[{"id":"__proto__","value":{"polluted":true}}]}') as WireRow,
    );
    expect(Object.getPrototypeOf(spec.values)).toBe(Object.prototype);
    expect((spec.values as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(spec.values)).toEqual(['__proto__']);
  });

  it('names the row and the field when a system value cannot be read', () => {
    let error: unknown;
    try {
      normaliseRow({ rowid: 'row-9', utime: '25/03/2024' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(RowShapeError);
    expect(error).toMatchObject({ rowId: 'row-9', field: 'utime' });
    expect((error as Error).message).toMatch(
      /^row row-9: utime: "25\/03\/2024" is not a platform timestamp; expected/,
    );

    expect(() => normaliseRow({ rowid: 'row-9', caid: 42 })).toThrow(
      'row row-9: caid: a number is not a user reference; expected {accountId, fullname} (or {id, name}), a JSON string of one, or a plain account id',
    );
  });

  it('refuses a row without an id, listing the keys it has', () => {
    expect(() => normaliseRow({ name: 'x', price: 1 })).toThrow(
      'row has no id: expected a non-empty string in "id" or "rowid"; keys present: name, price',
    );
  });

  it('reads many rows with one normaliser and refuses a bad time zone before any row', () => {
    const normalise = createRowNormaliser({ structure, timeZone: 'Europe/Berlin' });
    const rows = [normalise({ rowid: 'a', ctime: '2024-07-01 12:00:00' }), normalise(specRow)];
    expect(rows[0]!.createdAt?.toISOString()).toBe('2024-07-01T10:00:00.000Z');
    expect(rows[1]!.values.name).toBe('Ada');
    expect(() => createRowNormaliser({ timeZone: 'Nowhere/Land' })).toThrow(
      '"Nowhere/Land" is not an IANA time zone',
    );
  });

  it('re-exports parsePlatformTimestamp', () => {
    expect(parsePlatformTimestamp('2024-03-25 15:52:58', 'UTC').toISOString()).toBe(
      '2024-03-25T15:52:58.000Z',
    );
  });

  it("reads the export's typos (_createAt, _createBy), the older export's names and user objects with id/name", () => {
    const typos = normaliseRow(
      {
        id: 'r',
        _createAt: '2025-03-02 08:15:40',
        _createBy: { id: 'acc-1', name: 'Dana' },
        _updatedAt: '2025-03-18 16:02:11',
      },
      undefined,
      { timeZone: 'Asia/Shanghai' },
    );
    expect(typos.createdAt?.toISOString()).toBe('2025-03-02T00:15:40.000Z');
    expect(typos.createdBy).toEqual({ accountId: 'acc-1', fullname: 'Dana' });
    expect(typos.updatedAt?.toISOString()).toBe('2025-03-18T08:02:11.000Z');
    const older = normaliseRow({
      rowid: 'r',
      createdAt: '2025-03-02 08:15:40',
      ownerBy: { id: 'acc-2' },
      updatedBy: 'acc-3',
    });
    expect(older).toMatchObject({
      id: 'r',
      createdAt: new Date('2025-03-02T08:15:40Z'),
      owner: { accountId: 'acc-2' },
      updatedBy: { accountId: 'acc-3' },
    });
    expect(older.values).toEqual({});
    // The v3 name wins over the typo, whichever comes first.
    expect(
      normaliseRow({
        id: 'r',
        _createAt: '2020-01-01 00:00:00',
        _createdAt: '2024-01-01 00:00:00',
      }).createdAt?.getUTCFullYear(),
    ).toBe(2024);
  });

  it('takes id before rowid', () => {
    expect(normaliseRow({ id: 'new', rowid: 'old' }).id).toBe('new');
  });

  it('keeps an unreadable _updatedBy (unused by the sync) as received instead of failing the row', () => {
    const row = normaliseRow({
      id: 'r',
      _updatedBy: 42,
      wfstatus: { odd: true },
      wfnew: 'x',
      _createdBy: 'acc-1',
    });
    expect(row.updatedBy).toBeUndefined();
    expect(row.system).toMatchObject({ _updatedBy: 42, _processStatus: { odd: true } });
    expect(row.values).toEqual({ wfnew: 'x' });
    expect(row.createdBy).toEqual({ accountId: 'acc-1' });
    expect(() => normaliseRow({ id: 'r', _createdBy: 42 })).toThrow(
      'row r: _createdBy: a number is not a user reference',
    );
  });
});

describe('readUserRef', () => {
  it('reads objects, JSON strings, plain ids and one-element arrays', () => {
    expect(readUserRef({ accountId: 'a', fullname: 'A' })).toEqual({ accountId: 'a', fullname: 'A' });
    expect(readUserRef('{"accountId":"a","fullname":"A"}')).toEqual({ accountId: 'a', fullname: 'A' });
    expect(readUserRef('[{"accountId":"a"}]')).toEqual({ accountId: 'a' });
    expect(readUserRef(' a-b-c ')).toEqual({ accountId: 'a-b-c' });
    expect(readUserRef([])).toBeUndefined();
  });

  it('refuses what it cannot read', () => {
    expect(() => readUserRef('{"accountId":')).toThrow('looks like JSON but does not parse');
    expect(() => readUserRef([{ accountId: 'a' }, { accountId: 'b' }])).toThrow(
      'an array of 2 is not one user reference',
    );
    expect(() => readUserRef({ fullname: 'A' })).toThrow('an object without a string accountId');
  });
});
