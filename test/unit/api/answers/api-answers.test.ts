import { describe, expect, it } from 'vitest';
import { AnswerShapeError, BatchCountMismatchError } from '../../../../src/api/answers/answer-shape-error.ts';
import { listAppWorksheets } from '../../../../src/api/answers/list-app-worksheets.ts';
import { parseAppInfo } from '../../../../src/api/answers/parse-app-info.ts';
import { parseRegions, parseUsersLookup } from '../../../../src/api/answers/parse-lookups.ts';
import { parseRowList } from '../../../../src/api/answers/parse-row-list.ts';
import { parseWorksheetList } from '../../../../src/api/answers/parse-worksheet-list.ts';
import { parseWorksheetStructure } from '../../../../src/api/answers/parse-worksheet-structure.ts';
import {
  parseBatchCreated,
  parseBatchUpdated,
  parseRowId,
} from '../../../../src/api/answers/parse-write-results.ts';
import { readEnvelopeStatus } from '../../../../src/api/envelope.ts';
import { classifyError } from '../../../../src/ground/errors.ts';

/**
 * The answer parsers on what the contract test's fixtures do not show: broken answers
 * (each message names the operation and the key), and tolerated spellings beyond them.
 */

const ref = (operation: string) => ({ operation, method: 'GET', path: '/v3/x' });

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    if (err instanceof Error) return err;
  }
  throw new Error('expected a throw');
}

describe('readEnvelopeStatus', () => {
  it.each([
    ['success true without a code', { success: true, data: 1 }, true, undefined],
    ['success true with error_code 1', { success: true, error_code: 1 }, true, 1],
    ['V1 code 1 without success', { code: 1, data: [] }, true, 1],
    ['worksheet-list schema: data, no success', { data: [] }, true, undefined],
    ['region helper state 1', { data: {}, state: 1 }, true, undefined],
    ['region helper state 0', { data: {}, state: 0 }, false, undefined],
    ['error_code failure', { success: false, error_code: 10101, error_msg: 'x' }, false, 10101],
    ['code/msg failure', { success: false, code: 10001, msg: 'x', data: {} }, false, 10001],
    ['errorCode/errorMsg failure', { success: false, errorCode: 430022, errorMsg: 'gone' }, false, 430022],
    ['V1 code 0 without success', { code: 0 }, false, 0],
  ])('%s', (_name, env, ok, code) => {
    expect(readEnvelopeStatus(env)).toMatchObject({ ok, code });
  });

  it('reads the text under every spelling', () => {
    expect(readEnvelopeStatus({ success: false, errorMsg: 'a' }).message).toBe('a');
    expect(readEnvelopeStatus({ success: false, msg: 'b' }).message).toBe('b');
    expect(readEnvelopeStatus({ success: false, error_msg: 'c', msg: 'd' }).message).toBe('c');
  });
});

describe('parseWorksheetStructure', () => {
  it('names the keys present when neither worksheetId nor id is there', () => {
    const err = thrown(() => parseWorksheetStructure({ name: 'Orders', fields: [] }, ref('worksheets.get')));
    expect(err).toBeInstanceOf(AnswerShapeError);
    expect(err.message).toBe(
      'worksheets.get (GET /v3/x): the structure has no worksheet id: expected a non-empty string under "worksheetId" or "id"; keys present: "name", "fields"',
    );
  });

  it('prefers worksheetId, accepts id, and refuses a missing fields list or a field without a type', () => {
    expect(parseWorksheetStructure({ worksheetId: 'a', id: 'b', fields: [] }, ref('w')).id).toBe('a');
    expect(parseWorksheetStructure({ id: 'b', fields: [] }, ref('w')).id).toBe('b');
    expect(() => parseWorksheetStructure({ id: 'b' }, ref('w'))).toThrow(
      'worksheet b: "fields" is not an array',
    );
    expect(() => parseWorksheetStructure({ id: 'b', fields: [{ id: 'f1', type: null }] }, ref('w'))).toThrow(
      'field f1 has no usable "type" (a type name or a numeric code), got null',
    );
    expect(() => parseWorksheetStructure({ id: 'b', fields: [{ name: 'x' }] }, ref('w'))).toThrow(
      'fields[0] has no "id" (a 24-hex field id); keys present: "name"',
    );
  });

  it('turns codes into names, keeps unknown names, and reads option flags in every form', () => {
    const structure = parseWorksheetStructure(
      {
        worksheetId: 'w',
        fields: [
          { id: 'a', type: 2 },
          {
            id: 'b',
            type: '11',
            options: [
              { key: 'k1', value: 'A', index: '1', isDeleted: 0 },
              { key: 'k2', value: 'B', index: 2, isDeleted: 'TRUE' },
            ],
          },
          { id: 'c', type: 999 },
          { id: 'd', type: 'HoloField', required: 'true', isTitle: 1 },
        ],
      },
      ref('w'),
    );
    expect(structure.fields.map((f) => f.type)).toEqual(['Text', 'Dropdown', 'CustomField', 'HoloField']);
    expect(structure.fields[1]?.options).toEqual([
      { key: 'k1', value: 'A', index: 1, isDeleted: false },
      { key: 'k2', value: 'B', index: 2, isDeleted: true },
    ]);
    expect(structure.fields[3]).toMatchObject({ required: true, isTitle: true });
  });
});

describe('parseBatchCreated', () => {
  it('reads rowIds, rows of ids, rows of row objects, ids, or a bare list, in order', () => {
    expect(parseBatchCreated({ rowIds: ['a', 'b'] }, 2, ref('rows.batchCreate'))).toEqual(['a', 'b']);
    expect(parseBatchCreated({ rows: ['a', 'b'] }, 2, ref('r'))).toEqual(['a', 'b']);
    expect(parseBatchCreated({ rows: [{ id: 'a' }, { rowid: 'b' }] }, 2, ref('r'))).toEqual(['a', 'b']);
    expect(parseBatchCreated({ ids: ['a'] }, 1, ref('r'))).toEqual(['a']);
    expect(parseBatchCreated(['a'], 1, ref('r'))).toEqual(['a']);
  });

  it('a count mismatch is its own error, ambiguous (the rows were probably created)', () => {
    const err = thrown(() => parseBatchCreated({ rows: [] }, 2, ref('rows.batchCreate')));
    expect(err).toBeInstanceOf(BatchCountMismatchError);
    expect(err).toMatchObject({ sent: 2, answered: 0 });
    expect(classifyError(err)).toBe('ambiguous');
    expect(err.message).toBe(
      'rows.batchCreate (GET /v3/x): sent 2 rows but "data.rows" holds 0 row ids: cannot tell which row got which id',
    );
    expect(thrown(() => parseBatchCreated(undefined, 1, ref('r')))).toBeInstanceOf(BatchCountMismatchError);
  });

  it('refuses an entry without an id and an answer without a list', () => {
    const bad = thrown(() => parseBatchCreated({ rowIds: ['a', 42] }, 2, ref('rows.batchCreate')));
    expect(bad).not.toBeInstanceOf(BatchCountMismatchError);
    expect(bad.message).toContain('data.rowIds[1] is neither a row id nor a row with an "id"');
    expect(() => parseBatchCreated({ created: 2 }, 2, ref('r'))).toThrow(
      'expected the new row ids under "rowIds" (or "rows"); keys present: "created"',
    );
  });
});

describe('parseBatchUpdated and parseRowId', () => {
  it('fills the missing list from the ids sent, and refuses an answer with neither', () => {
    expect(parseBatchUpdated({ failedRowIds: ['b'] }, ['a', 'b'], ref('r'))).toEqual({
      successfulRowIds: ['a'],
      failedRowIds: ['b'],
    });
    expect(parseBatchUpdated({ succeededRowIds: ['a'] }, ['a', 'b'], ref('r'))).toEqual({
      successfulRowIds: ['a'],
      failedRowIds: ['b'],
    });
    expect(() => parseBatchUpdated({}, ['a'], ref('rows.batchUpdate'))).toThrow(
      'rows.batchUpdate (GET /v3/x): expected "successfulRowIds" (or "succeededRowIds") and "failedRowIds"; got an empty object',
    );
    expect(() => parseBatchUpdated({ failedRowIds: 'a' }, ['a'], ref('r'))).toThrow(
      '"failedRowIds" is not a list of row ids',
    );
  });

  it('reads an empty or missing id as unknown', () => {
    expect(parseRowId({ id: '' })).toBeUndefined();
    expect(parseRowId(undefined)).toBeUndefined();
    expect(parseRowId({ id: 'r1' })).toBe('r1');
  });
});

describe('app, worksheet list, rows, lookups', () => {
  it('walks nested child sections and lists each worksheet once', () => {
    const app = parseAppInfo(
      {
        sections: [
          {
            sectionId: 's1',
            items: [
              { id: 'w1', type: 0, name: 'A' },
              { id: 'g1', type: 2 },
            ],
            childSections: [
              {
                id: 'g1',
                items: [{ id: 'w2', type: '0' }],
                childSections: [{ id: 'g2', items: [{ id: 'w1', type: 0 }] }],
              },
            ],
          },
        ],
      },
      ref('apps.get'),
    );
    expect(listAppWorksheets(app)).toEqual([
      { id: 'w1', name: 'A', alias: '', sectionId: 's1' },
      { id: 'w2', name: '', alias: '', sectionId: 'g1' },
    ]);
    expect(() => parseAppInfo({ sections: [{ name: 'x', items: [] }] }, ref('apps.get'))).toThrow(
      'sections[0] has no id: expected "id" or "sectionId"; keys present: "name", "items"',
    );
    expect(() => parseAppInfo({ name: 'x' }, ref('apps.get'))).toThrow('"sections" is not an array');
  });

  it('reads the Markdown list with a separator row, and says what is wrong with another table', () => {
    const md = 'id\uFF5Cname\uFF5Cremark\n---\uFF5C---\uFF5C---\nw1\uFF5COrders\uFF5C\n';
    expect(parseWorksheetList(md, ref('worksheets.list'))).toEqual([
      { id: 'w1', name: 'Orders', remark: '' },
    ]);
    expect(() => parseWorksheetList('id|name\nw1|x', ref('worksheets.list'))).toThrow('has no "id" column');
    expect(() => parseWorksheetList([{ name: 'x' }], ref('worksheets.list'))).toThrow('data[0] has no "id"');
  });

  it('reads total under "total\\t" as a string, and refuses Markdown or a missing rows list', () => {
    expect(parseRowList({ rows: [], 'total\t': '7' }, ref('rows.list'))).toEqual({ rows: [], total: 7 });
    expect(parseRowList({ rows: [], total: 'many' }, ref('rows.list'))).toEqual({ rows: [] });
    expect(() => parseRowList('|id|', ref('rows.list'))).toThrow(
      'rowbridge reads responseFormat "json" only',
    );
    expect(() => parseRowList({ data: [] }, ref('rows.list'))).toThrow(
      'expected {rows, total?} with a "rows" array; keys present: "data"',
    );
    expect(() => parseRowList({ rows: [null] }, ref('rows.list'))).toThrow('rows[0] is not an object');
  });

  it('reads users under both spellings and refuses one without an id', () => {
    expect(
      parseUsersLookup(
        { users: [{ id: 'u1', name: 'Ada', departments: [{ departmentId: 'd1', departmentName: 'Ops' }] }] },
        ref('l'),
      ),
    ).toEqual([{ accountId: 'u1', fullname: 'Ada', departments: [{ id: 'd1', name: 'Ops' }] }]);
    expect(() => parseUsersLookup({ users: [{ fullname: 'Ada' }] }, ref('lookups.users'))).toThrow(
      'users[0] has no "accountId" (or "id"); keys present: "fullname"',
    );
    expect(() => parseUsersLookup({ list: [] }, ref('lookups.users'))).toThrow('expected a "users" list');
    expect(parseUsersLookup([{ accountId: 'u2', fullname: 'Bo' }], ref('l'))).toMatchObject([
      { accountId: 'u2' },
    ]);
    expect(parseRegions({ regions: [{ id: 310000, name: 'Shanghai', last: 'false' }] }, ref('l'))).toEqual([
      { id: '310000', name: 'Shanghai', path: 'Shanghai', last: false },
    ]);
  });
});
