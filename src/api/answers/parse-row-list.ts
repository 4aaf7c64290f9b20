/**
 * `data` of a row list (`POST .../rows/list`, `GET .../rows/{id}/relations/{field}`):
 * `{rows, total?}` (platform-shapes §5, §10 [C]). `total` is absent unless
 * `includeTotalCount` was sent [L]; the list schema types it as a string under the key
 * `"total\t"` (trailing tab), the example and the relations schema as an integer under
 * `total` [C]: all three are read.
 */
import type { ListRowsData, WireRow } from '../types.ts';
import { AnswerShapeError, describeKeys } from './answer-shape-error.ts';
import type { AnswerRef } from './answer-shape-error.ts';
import { asRecord, readLooseInteger } from './read-loose.ts';

function readTotal(data: Record<string, unknown>): number | undefined {
  const key = 'total' in data ? 'total' : Object.keys(data).find((k) => k.trim() === 'total');
  if (key === undefined) return undefined;
  const total = readLooseInteger(data[key]);
  return total !== undefined && total >= 0 ? total : undefined;
}

/** Reads a page of rows; throws {@link AnswerShapeError} when there is no `rows` array or a row is not an object. */
export function parseRowList(data: unknown, ref: AnswerRef): ListRowsData {
  if (typeof data === 'string') {
    throw new AnswerShapeError(
      ref,
      'the rows came as Markdown text; rowbridge reads responseFormat "json" only',
    );
  }
  const record = asRecord(data);
  if (record === undefined || !Array.isArray(record.rows)) {
    throw new AnswerShapeError(ref, `expected {rows, total?} with a "rows" array; ${describeKeys(data)}`);
  }
  record.rows.forEach((row, at) => {
    if (asRecord(row) === undefined) throw new AnswerShapeError(ref, `rows[${at}] is not an object`);
  });
  const result: ListRowsData = { rows: record.rows as WireRow[] };
  const total = readTotal(record);
  if (total !== undefined) result.total = total;
  return result;
}

/** Reads one row (`GET .../rows/{row_id}`); throws {@link AnswerShapeError} when `data` is not an object. */
export function parseRow(data: unknown, ref: AnswerRef): WireRow {
  const row = asRecord(data);
  if (row === undefined) throw new AnswerShapeError(ref, `expected one row object, ${describeKeys(data)}`);
  return row;
}
