import type { FieldValue } from '../api/types.ts';
import type { BatchRow } from './batch-row.ts';
import type { PendingLookup } from './mapping/map-result.ts';
import type { SourcePosition, SourceRecord } from './types.ts';
import { columnarIndexes, hasColumns, isColumnar, packColumns, unpackColumns } from './columnar-rows.ts';
import type { ColumnarRows } from './columnar-rows.ts';

/**
 * Batch rows as a batch job carries them through Redis. A job holds up to 1,000 rows;
 * as plain objects each row repeated its column names, its field ids and the keys of
 * five nested objects, and BullMQ stringifying that into Redis and parsing it back in
 * the worker was a sixth of a 1M-row import's CPU (bench/import.ts). Packed, the column
 * names and field ids are written once per job and each row is one array.
 *
 * The encoding is exact: {@link unpackRows} gives back what {@link packRows} was given,
 * after the same JSON round trip the objects took before (a record whose keys differ
 * from the job's columns keeps its data object as it is).
 */
export interface PackedRows {
  /** Keys of the source records' data, in order, once for the job. */
  columns: string[];
  /** Field ids of the mapped rows, in mapping order, once for the job. */
  fieldIds: string[];
  /**
   * For each field, the index in `columns` of the column it is mapped from (null for
   * none): a field value equal to that column's value is not written twice (`same`).
   */
  fieldColumns?: Array<number | null>;
  rows: PackedRow[];
}

/**
 * One row: its index (the record's ordinal, `position.index`), the line it starts on,
 * its key and content hash, its data (values in `columns` order, or the data object
 * itself), its mapped field values (in `fieldIds` order), which of those equal their
 * column's value and are left out (bit f set: field f's value is the data's
 * `fieldColumns[f]`, 0 in its place), and what most rows lack.
 */
export type PackedRow = [
  index: number,
  line: number | null,
  key: string | null,
  hash: string,
  data: unknown[] | Record<string, unknown>,
  values: unknown[],
  same: number,
  rest?: PackedRest,
];

/** Fields past this index are always written out (`same` is a 31-bit mask). */
const SAME_BITS = 31;

/** The parts of a row most rows do not have. */
interface PackedRest {
  page?: number | string;
  id?: string;
  cursor?: unknown;
  /** Each field's write type (`null` where it has none). */
  types?: Array<string | null>;
  pending?: PendingLookup[];
  /** Field ids, when this row's differ from the job's (never, from one plan). */
  fieldIds?: string[];
  /** Fields whose value is `undefined` (JSON would turn it into `null` in an array). */
  undefinedValues?: number[];
}

function sameIds(fields: readonly FieldValue[], ids: readonly string[]): boolean {
  if (fields.length !== ids.length) return false;
  for (let i = 0; i < fields.length; i++) if (fields[i]!.id !== ids[i]) return false;
  return true;
}

/**
 * Packs `rows`. `fieldSources` names the column each mapped field is read from
 * (the plan's `column`, in field order): values equal to it are written once.
 */
export function packRows(
  rows: readonly BatchRow[],
  fieldSources: ReadonlyArray<string | undefined> = [],
): PackedRows {
  const first = rows[0];
  const columns = first === undefined ? [] : Object.keys(first.source.data);
  const fieldIds = first === undefined ? [] : first.mapped.fields.map((f) => f.id);
  const fieldColumns = fieldIds.map((_, f) => {
    const column = f < SAME_BITS ? fieldSources[f] : undefined;
    const at = column === undefined ? -1 : columns.indexOf(column);
    return at < 0 ? null : at;
  });
  const packed: PackedRow[] = new Array<PackedRow>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const { index, source, mapped } = rows[r]!;
    const { data, position } = source;
    let values: unknown[] | Record<string, unknown> = data;
    if (hasColumns(data, columns)) {
      values = new Array<unknown>(columns.length);
      for (let c = 0; c < columns.length; c++) values[c] = data[columns[c]!];
    }
    const { fields } = mapped;
    const fieldValues = new Array<unknown>(fields.length);
    const ownIds = sameIds(fields, fieldIds);
    const alike = Array.isArray(values) && ownIds;
    let same = 0;
    let types: Array<string | null> | undefined;
    let undefinedValues: number[] | undefined;
    for (let f = 0; f < fields.length; f++) {
      const field = fields[f]!;
      const at = alike ? fieldColumns[f] : null;
      // Strings only: a number or an object equal by === would be the same either way,
      // but only a string's JSON is worth leaving out.
      if (at != null && typeof field.value === 'string' && field.value === (values as unknown[])[at]) {
        same |= 1 << f;
        fieldValues[f] = 0;
      } else fieldValues[f] = field.value;
      if (field.value === undefined) (undefinedValues ??= []).push(f);
      if (field.type !== undefined)
        (types ??= new Array<string | null>(fields.length).fill(null))[f] = field.type;
    }
    let rest: PackedRest | undefined;
    if (position.page !== undefined) (rest ??= {}).page = position.page;
    if (position.id !== undefined) (rest ??= {}).id = position.id;
    if (source.cursor !== undefined) (rest ??= {}).cursor = source.cursor;
    if (types !== undefined) (rest ??= {}).types = types;
    if (mapped.pending !== undefined) (rest ??= {}).pending = mapped.pending;
    if (!ownIds) (rest ??= {}).fieldIds = fields.map((f) => f.id);
    if (undefinedValues !== undefined) (rest ??= {}).undefinedValues = undefinedValues;
    const row: PackedRow = [
      index,
      position.line ?? null,
      mapped.key ?? null,
      mapped.hash,
      values,
      fieldValues,
      same,
    ];
    if (rest !== undefined) row.push(rest);
    packed[r] = row;
  }
  return { columns, fieldIds, fieldColumns, rows: packed };
}

export function unpackRows(packed: PackedRows): BatchRow[] {
  const { columns } = packed;
  const fieldColumns = packed.fieldColumns ?? [];
  return packed.rows.map(([index, line, key, hash, values, fieldValues, same, rest]) => {
    let data: Record<string, unknown>;
    if (Array.isArray(values)) {
      data = {};
      for (let c = 0; c < columns.length; c++) data[columns[c]!] = values[c];
    } else data = values;
    const position: SourcePosition = { index };
    if (line !== null) position.line = line;
    if (rest?.page !== undefined) position.page = rest.page;
    if (rest?.id !== undefined) position.id = rest.id;
    const source: SourceRecord = { data, position };
    if (rest !== undefined && 'cursor' in rest) source.cursor = rest.cursor;
    const ids = rest?.fieldIds ?? packed.fieldIds;
    const types = rest?.types;
    const fields: FieldValue[] = new Array<FieldValue>(fieldValues.length);
    for (let f = 0; f < fieldValues.length; f++) {
      const type = types?.[f];
      const value =
        f < SAME_BITS && (same & (1 << f)) !== 0 ? (values as unknown[])[fieldColumns[f]!] : fieldValues[f];
      fields[f] = type === undefined || type === null ? { id: ids[f]!, value } : { id: ids[f]!, value, type };
    }
    for (const f of rest?.undefinedValues ?? []) fields[f]!.value = undefined;
    const row: BatchRow = { index, source, mapped: { ok: true, fields, hash, position } };
    if (key !== null) row.mapped.key = key;
    if (rest?.pending !== undefined) row.mapped.pending = rest.pending;
    return row;
  });
}

/**
 * The newest format of batch job rows this version reads and adds: 1 was `rows` as
 * objects, 2 is `packed` (row by row, this file), 3 is `columnar` (./columnar-rows.ts),
 * 4 is `columnar` whose columns of strings may each be one joined string (what regular
 * batches are written in; others stay in 2). A worker refuses formats it
 * does not know instead of reading an empty batch: before this check, a worker given
 * rows in a field it did not know completed the job with none written.
 */
export const BATCH_ROWS_FORMAT = 4;

/** A batch job's rows are in a format this version does not read. */
export class UnreadableBatchError extends Error {
  override name = 'UnreadableBatchError';
}

/**
 * The rows of a batch job's data, whichever format this version or an earlier one wrote.
 * Throws {@link UnreadableBatchError} for a newer format (a newer rowbridge shares the
 * queue) or data without rows.
 */
export function batchRows(data: {
  format?: unknown;
  packed?: unknown;
  rows?: unknown;
  columnar?: unknown;
}): BatchRow[] {
  const format = data.format ?? (data.packed === undefined ? 1 : 2);
  if ((format === 4 || format === 3) && isColumnar(data.columnar)) return unpackColumns(data.columnar);
  if (format === 2 && isPacked(data.packed)) return unpackRows(data.packed);
  if (format === 1 && Array.isArray(data.rows)) return data.rows as BatchRow[];
  throw new UnreadableBatchError(
    typeof format === 'number' && format > BATCH_ROWS_FORMAT
      ? `batch job rows are in format ${format}, newer than this worker reads (${BATCH_ROWS_FORMAT}): ` +
          'a newer rowbridge added them; upgrade every worker that shares this Redis'
      : `batch job data holds no rows this worker can read (format ${JSON.stringify(format)}, ` +
          `fields ${Object.keys(data).join(', ')})`,
  );
}

/**
 * A batch job's data for `rows`: format 4 when they are regular, else 2. Format 4 (as 3 did) leaves
 * `packed` null on purpose: a worker older than the format check reads `packed` when it
 * is not `undefined`, and fails on null before writing anything, where it would have
 * read a batch of no rows from data it did not know.
 */
export function batchJobRows(
  rows: readonly BatchRow[],
  fieldSources: ReadonlyArray<string | undefined>,
): { format: 2; packed: PackedRows } | { format: 4; packed: null; columnar: ColumnarRows } {
  const columnar = packColumns(rows, fieldSources);
  return columnar === undefined
    ? { format: 2, packed: packRows(rows, fieldSources) }
    : { format: 4, packed: null, columnar };
}

function isPacked(value: unknown): value is PackedRows {
  const packed = value as Partial<PackedRows> | undefined;
  return (
    typeof packed === 'object' &&
    packed !== null &&
    Array.isArray(packed.columns) &&
    Array.isArray(packed.fieldIds) &&
    Array.isArray(packed.rows)
  );
}

/** The row indexes a batch job holds, from any form of its data (for summaries). */
export function batchRowIndexes(data: {
  rows?: unknown;
  packed?: unknown;
  columnar?: unknown;
}): number[] | undefined {
  if (isColumnar(data.columnar)) return columnarIndexes(data.columnar);
  const packed = data.packed as PackedRows | null | undefined;
  if (packed != null && Array.isArray(packed.rows)) return packed.rows.map((r) => r[0]);
  if (Array.isArray(data.rows)) return data.rows.map((r) => (r as { index: number }).index);
  return undefined;
}
