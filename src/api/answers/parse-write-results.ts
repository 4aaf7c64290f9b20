/**
 * `data` of the row writes (platform-shapes §7, `row-*.json`, `rows-batch-*.json`).
 * The export contradicts its schemas here: batch create is `{rowIds}` in the schema and
 * `{rows: []}` in the example; batch update's success list was `succeededRowIds` in the
 * older export; PATCH row, DELETE row and DELETE batch examples carry no `data` at all;
 * create row's example has `{id: ""}` [C].
 */
import type { BatchUpdateResult } from '../types.ts';
import { AnswerShapeError, BatchCountMismatchError, describeKeys } from './answer-shape-error.ts';
import type { AnswerRef } from './answer-shape-error.ts';
import { asRecord, firstId, readId } from './read-loose.ts';

/** Keys of a batch-create answer that may hold the new rows, in order of preference. */
const CREATED_KEYS = ['rowIds', 'rows', 'ids'] as const;

function idOf(entry: unknown): string | undefined {
  if (typeof entry === 'string') return readId(entry);
  const row = asRecord(entry);
  return row === undefined ? undefined : firstId(row, ['id', 'rowid', 'rowId'])?.id;
}

/**
 * The ids batch create gave the `sent` rows, in input order (assumed, platform-shapes
 * §7 [U]). Reads `data.rowIds`, `data.rows` (ids or row objects), `data.ids`, or `data`
 * itself as a list. Another count than `sent` is a {@link BatchCountMismatchError}
 * (category `ambiguous`: the rows were probably created); an entry without an id is an
 * {@link AnswerShapeError}.
 */
export function parseBatchCreated(data: unknown, sent: number, ref: AnswerRef): string[] {
  let key = 'data';
  let list: unknown[] | undefined = Array.isArray(data) ? data : undefined;
  const record = asRecord(data);
  if (record !== undefined) {
    const found = CREATED_KEYS.find((k) => Array.isArray(record[k]));
    if (found !== undefined) {
      key = `data.${found}`;
      list = record[found] as unknown[];
    }
  }
  if (list === undefined) {
    if (data === undefined || data === null || (record !== undefined && Object.keys(record).length === 0)) {
      throw new BatchCountMismatchError(ref, sent, 0, 'data');
    }
    throw new AnswerShapeError(
      ref,
      `expected the new row ids under "rowIds" (or "rows"); ${describeKeys(data)}`,
      'ambiguous',
    );
  }
  const ids = list.map(idOf);
  const bad = ids.findIndex((id) => id === undefined);
  if (bad !== -1) {
    throw new AnswerShapeError(ref, `${key}[${bad}] is neither a row id nor a row with an "id"`, 'ambiguous');
  }
  if (ids.length !== sent) throw new BatchCountMismatchError(ref, sent, ids.length, key);
  return ids as string[];
}

function idList(
  record: Record<string, unknown>,
  keys: readonly string[],
  ref: AnswerRef,
): string[] | undefined {
  const key = keys.find((k) => k in record && record[k] !== null && record[k] !== undefined);
  if (key === undefined) return undefined;
  const value = record[key];
  if (!Array.isArray(value) || value.some((id) => readId(id) === undefined)) {
    throw new AnswerShapeError(ref, `"${key}" is not a list of row ids`);
  }
  return value as string[];
}

/**
 * Batch update's outcome: `successfulRowIds` (or the older `succeededRowIds`) and
 * `failedRowIds`. When one list is missing, the other decides: rows not reported
 * failed count as updated, and the other way round. With neither list the answer says
 * nothing about the rows: an {@link AnswerShapeError}.
 */
export function parseBatchUpdated(
  data: unknown,
  rowIds: readonly string[],
  ref: AnswerRef,
): BatchUpdateResult {
  const record = asRecord(data) ?? {};
  const successful = idList(record, ['successfulRowIds', 'succeededRowIds'], ref);
  const failed = idList(record, ['failedRowIds'], ref);
  if (successful === undefined && failed === undefined) {
    throw new AnswerShapeError(
      ref,
      `expected "successfulRowIds" (or "succeededRowIds") and "failedRowIds"; ${describeKeys(data)}`,
    );
  }
  if (successful !== undefined && failed !== undefined)
    return { successfulRowIds: successful, failedRowIds: failed };
  if (failed !== undefined) {
    const out = new Set(failed);
    return { successfulRowIds: rowIds.filter((id) => !out.has(id)), failedRowIds: failed };
  }
  const done = new Set(successful);
  return { successfulRowIds: successful ?? [], failedRowIds: rowIds.filter((id) => !done.has(id)) };
}

/**
 * The row id of a single create or update: `data.id`, or undefined when the answer has
 * no data or an empty id (the export's create example sends `{id: ""}` [C]).
 */
export function parseRowId(data: unknown): string | undefined {
  const record = asRecord(data);
  return record === undefined ? undefined : firstId(record, ['id', 'rowid', 'rowId'])?.id;
}
