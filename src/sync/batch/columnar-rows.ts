import type { FieldValue } from '../../api/types.ts';
import type { Joined } from './joined-column.ts';
import type { PendingLookup } from '../mapping/map-result.ts';

/**
 * The rows of a batch job as it carries them through Redis (the one batch job rows
 * format: {@link BATCH_ROWS_FORMAT} of ./batch-job-rows.ts). Each source column and each
 * field is one array for the whole job, instead of an object per row: BullMQ's
 * stringify of the job in the reader and its parse in the worker go over a few arrays
 * instead of thousands of objects, and
 *
 * - a field that is its column's own text for every row is written as that column (`{c}`);
 * - a field whose every value is one option, relation or member id (`["id"]`) is written
 *   as indexes into the job's distinct ids (`{d, r}`);
 * - consecutive indexes, lines at a constant distance from them, no keys and one hash
 *   are written once;
 * - a column or field of strings, none holding DEL, is one string of its values joined
 *   by DEL (`{j}`, ./joined-column.ts): the worker's parse makes one string where it made one per row, each
 *   alive for the whole job (see {@link JoinedColumn});
 * - what only some rows have (a page, a source id, a cursor, write types, pending
 *   lookups, `undefined` values, data whose keys are not the job's columns) is in
 *   `extras`, by row, and those rows' cells in the columns are null.
 *
 * On 1,000 orders rows (bench/import.ts): 155 → 86 KB of job data against the rows as
 * objects. unpackColumns (./unpack-columns.ts) gives back what packColumns
 * (./pack-columns.ts) was given, after the JSON round trip the rows as objects took.
 */
export interface ColumnarRows {
  /** Rows in the job. */
  n: number;
  /** Index of row i: `first + i`, or `indexes[i]` when they are not consecutive. */
  first: number;
  indexes?: number[];
  /** Line of row i: its index plus `lineOffset`, or `lines[i]` (null: no line). */
  lineOffset?: number;
  lines?: Array<number | null>;
  /** Keys by row; absent when no row has one. */
  keys?: Array<string | null>;
  /** Content hash: one for every row, or one per row. */
  hash: string | string[];
  columns: string[];
  /** Column c of row i's data: `values[c][i]`, or the i-th of a {@link Joined} column. */
  values: Array<unknown[] | Joined>;
  fieldIds: string[];
  fields: ColumnarField[];
  /** What only some rows have, by row (`String(i)`); absent when no row has anything. */
  extras?: Record<string, RowExtras>;
}

/** What a row has beyond the job's columns and fields (see {@link ColumnarRows}). */
export interface RowExtras {
  page?: number | string;
  id?: string;
  idColumn?: string;
  cursor?: unknown;
  /** The record's data, when its keys are not the job's columns (or a value is `undefined`). */
  data?: Record<string, unknown>;
  /** The mapped fields, when their ids are not the job's. */
  fields?: FieldValue[];
  /** Each field's write type (`null` where it has none). */
  types?: Array<string | null>;
  pending?: PendingLookup[];
  /** Fields whose value is `undefined` (JSON writes it as `null` in an array). */
  undefinedValues?: number[];
}

/** A field's values: column c's, `[d[r[i]]]`, as they are, or joined strings. */
export type ColumnarField = { c: number } | { d: string[]; r: number[] } | Joined | unknown[];

/** Whether `value` has the shape of {@link ColumnarRows} (job data read from Redis). */
export function isColumnar(value: unknown): value is ColumnarRows {
  const c = value as Partial<ColumnarRows> | null | undefined;
  return (
    typeof c === 'object' &&
    c !== null &&
    typeof c.n === 'number' &&
    typeof c.first === 'number' &&
    Array.isArray(c.columns) &&
    Array.isArray(c.values) &&
    Array.isArray(c.fieldIds) &&
    Array.isArray(c.fields)
  );
}

/** The row indexes of a job (for summaries), without opening its columns. */
export function columnarIndexes(packed: ColumnarRows): number[] {
  return packed.indexes ?? Array.from({ length: packed.n }, (_, i) => packed.first + i);
}
