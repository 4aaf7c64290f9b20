import type { FieldValue } from '../../api/types.ts';
import type { BatchRow, RowToWrite } from './batch-row.ts';
import { isJoined, joined, JoinedColumn } from './joined-column.ts';
import type { Joined } from './joined-column.ts';
import type { MappedRow, PendingLookup } from '../mapping/map-result.ts';
import type { SourcePosition, SourceRecord } from '../model/types.ts';

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
 * objects. {@link unpackColumns} gives back what {@link packColumns} was given, after
 * the JSON round trip the rows as objects took.
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

function isOneId(value: unknown): value is [string] {
  return Array.isArray(value) && value.length === 1 && typeof value[0] === 'string';
}

/**
 * Whether `data`'s own keys are exactly `columns`, in order, none holding `undefined`
 * (which JSON drops from an object but writes as `null` in an array).
 */
function hasColumns(data: Record<string, unknown>, columns: readonly string[]): boolean {
  let i = 0;
  for (const key in data) {
    if (!Object.hasOwn(data, key)) continue;
    if (columns[i] !== key || data[key] === undefined) return false;
    i += 1;
  }
  return i === columns.length;
}

function sameIds(fields: readonly FieldValue[], ids: readonly string[]): boolean {
  if (fields.length !== ids.length) return false;
  for (let i = 0; i < fields.length; i++) if (fields[i]!.id !== ids[i]) return false;
  return true;
}

/** What `row` has beyond the job's `columns` and `fieldIds`, or `undefined` (most rows). */
function extrasOf(
  row: BatchRow,
  columns: readonly string[],
  fieldIds: readonly string[],
): RowExtras | undefined {
  const { source, mapped } = row;
  const { position } = source;
  let extras: RowExtras | undefined;
  if (position.page !== undefined) (extras ??= {}).page = position.page;
  if (position.id !== undefined) (extras ??= {}).id = position.id;
  if (position.idColumn !== undefined) (extras ??= {}).idColumn = position.idColumn;
  if (source.cursor !== undefined) (extras ??= {}).cursor = source.cursor;
  if (mapped.pending !== undefined) (extras ??= {}).pending = mapped.pending;
  if (!hasColumns(source.data, columns)) (extras ??= {}).data = source.data;
  const { fields } = mapped;
  if (!sameIds(fields, fieldIds)) {
    (extras ??= {}).fields = fields;
    return extras;
  }
  for (let f = 0; f < fields.length; f++) {
    const field = fields[f]!;
    if (field.type !== undefined)
      ((extras ??= {}).types ??= new Array<string | null>(fields.length).fill(null))[f] = field.type;
    if (field.value === undefined) ((extras ??= {}).undefinedValues ??= []).push(f);
  }
  return extras;
}

/**
 * `rows` by column (see {@link ColumnarRows}). `fieldSources` names the column each
 * mapped field is read from (the plan's `column`).
 */
export function packColumns(
  rows: readonly BatchRow[],
  fieldSources: ReadonlyArray<string | undefined> = [],
): ColumnarRows {
  const head = rows[0];
  if (head === undefined)
    return { n: 0, first: 0, hash: '', columns: [], values: [], fieldIds: [], fields: [] };
  const columns = Object.keys(head.source.data);
  const fieldIds = head.mapped.fields.map((f) => f.id);
  const n = rows.length;
  const values = columns.map(() => new Array<unknown>(n));
  const fieldValues = fieldIds.map(() => new Array<unknown>(n));
  const indexes = new Array<number>(n);
  const lines = new Array<number | null>(n);
  const keys = new Array<string | null>(n);
  const hashes = new Array<string>(n);
  let consecutive = true;
  let lineOffset: number | undefined =
    head.source.position.line === undefined ? undefined : head.source.position.line - head.index;
  let anyKey = false;
  let oneHash = true;
  let extras: Record<string, RowExtras> | undefined;
  for (let i = 0; i < n; i++) {
    const row = rows[i]!;
    const { index, source, mapped } = row;
    const own = extrasOf(row, columns, fieldIds);
    if (own !== undefined) (extras ??= {})[String(i)] = own;
    indexes[i] = index;
    if (index !== head.index + i) consecutive = false;
    const line = source.position.line ?? null;
    lines[i] = line;
    if (line === null || lineOffset === undefined || line - index !== lineOffset) lineOffset = undefined;
    keys[i] = mapped.key ?? null;
    if (mapped.key !== undefined) anyKey = true;
    hashes[i] = mapped.hash;
    if (mapped.hash !== head.mapped.hash) oneHash = false;
    // A row with extras of its own keeps null in their place: JSON's own form of `undefined` in an array.
    const { data } = source;
    const dataOwn = own?.data !== undefined;
    for (let c = 0; c < columns.length; c++) values[c]![i] = dataOwn ? null : data[columns[c]!];
    const { fields } = mapped;
    const fieldsOwn = own?.fields !== undefined;
    for (let f = 0; f < fieldIds.length; f++)
      fieldValues[f]![i] = fieldsOwn ? null : (fields[f]!.value ?? null);
  }
  const fields = fieldValues.map((column, f): ColumnarField => {
    const c = fieldSources[f] === undefined ? -1 : columns.indexOf(fieldSources[f]);
    if (c >= 0 && column.every((v, i) => typeof v === 'string' && v === values[c]![i])) return { c };
    if (column.every(isOneId)) {
      const d: string[] = [];
      const at = new Map<string, number>();
      const r = column.map((v) => {
        const id = v[0];
        let k = at.get(id);
        if (k === undefined) {
          k = d.length;
          d.push(id);
          at.set(id, k);
        }
        return k;
      });
      return { d, r };
    }
    return joined(column);
  });
  return {
    n,
    first: head.index,
    ...(consecutive ? {} : { indexes }),
    ...(lineOffset === undefined ? { lines } : { lineOffset }),
    ...(anyKey ? { keys } : {}),
    hash: oneHash ? head.mapped.hash : hashes,
    columns,
    values: values.map(joined),
    fieldIds,
    fields,
    ...(extras === undefined ? {} : { extras }),
  };
}

/**
 * The rows of a batch job, each a view of the job's columns: `source` and `mapped` are
 * built from them at each read, as plain objects, and what writing reads most (position,
 * key, hash, fields, pending lookups) is read on its own ({@link RowToWrite}).
 *
 * Why views: a batch job's rows live from the job's start to the answer of its last
 * request and its bookkeeping (tens of ms, several Redis and HTTP round trips). V8
 * promotes what outlives two young-generation collections, and with rows built whole
 * (about ten objects and 650 bytes a row) that was 650 of the 1,660 MB promoted in a
 * 1M-row import: old-generation garbage that sets the process's peak memory. A view is
 * one small object; what is built from it at a read is used at once and dies young.
 */
export function unpackColumns(packed: ColumnarRows): RowToWrite[] {
  const open = <T>(column: T | Joined): T | JoinedColumn =>
    isJoined(column) ? new JoinedColumn(column.j, packed.n) : column;
  const job: OpenJob = { packed, values: packed.values.map(open), fields: packed.fields.map(open) };
  const out = new Array<RowToWrite>(packed.n);
  for (let i = 0; i < packed.n; i++) out[i] = new ColumnarRow(job, i);
  return out;
}

/** A job's columns as its views read them: joined strings opened ({@link JoinedColumn}). */
interface OpenJob {
  packed: ColumnarRows;
  values: Column[];
  fields: Array<{ c: number } | { d: string[]; r: number[] } | Column>;
}

type Column = unknown[] | JoinedColumn;

function cell(column: Column, i: number): unknown {
  return Array.isArray(column) ? column[i] : column.at(i);
}

/** Row i of a job (see {@link unpackColumns}). */
class ColumnarRow implements RowToWrite {
  readonly index: number;
  readonly #job: OpenJob;
  readonly #i: number;
  readonly #extras: RowExtras | undefined;
  /** A mapping assigned by the code that writes (lookups resolved), kept as given. */
  #mapped: MappedRow | undefined;

  constructor(job: OpenJob, i: number) {
    const { packed } = job;
    this.#job = job;
    this.#i = i;
    this.#extras = packed.extras?.[String(i)];
    this.index = packed.indexes === undefined ? packed.first + i : packed.indexes[i]!;
  }

  get position(): SourcePosition {
    const { lineOffset, lines } = this.#job.packed;
    const position: SourcePosition = { index: this.index };
    const line = lineOffset === undefined ? (lines?.[this.#i] ?? null) : this.index + lineOffset;
    if (line !== null) position.line = line;
    const extras = this.#extras;
    if (extras?.page !== undefined) position.page = extras.page;
    if (extras?.id !== undefined) position.id = extras.id;
    if (extras?.idColumn !== undefined) position.idColumn = extras.idColumn;
    return position;
  }

  get source(): SourceRecord {
    const extras = this.#extras;
    let data = extras?.data;
    if (data === undefined) {
      const { columns } = this.#job.packed;
      const { values } = this.#job;
      data = {};
      for (let c = 0; c < columns.length; c++) data[columns[c]!] = cell(values[c]!, this.#i);
    }
    const source: SourceRecord = { data, position: this.position };
    if (extras !== undefined && 'cursor' in extras) source.cursor = extras.cursor;
    return source;
  }

  get mapped(): MappedRow {
    if (this.#mapped !== undefined) return this.#mapped;
    const mapped: MappedRow = { ok: true, fields: this.fields, hash: this.hash, position: this.position };
    const { key, pending } = this;
    if (key !== undefined) mapped.key = key;
    if (pending !== undefined) mapped.pending = pending;
    return mapped;
  }

  set mapped(mapped: MappedRow) {
    this.#mapped = mapped;
  }

  get fields(): FieldValue[] {
    if (this.#mapped !== undefined) return this.#mapped.fields;
    const extras = this.#extras;
    if (extras?.fields !== undefined) return extras.fields.map((f) => ({ ...f }));
    const { fieldIds } = this.#job.packed;
    const { values, fields } = this.#job;
    const i = this.#i;
    const types = extras?.types;
    const out = new Array<FieldValue>(fields.length);
    for (let f = 0; f < fields.length; f++) {
      const field = fields[f]!;
      const value =
        Array.isArray(field) || field instanceof JoinedColumn
          ? cell(field, i)
          : 'c' in field
            ? cell(values[field.c]!, i)
            : [field.d[field.r[i]!]!];
      const type = types?.[f];
      out[f] = type == null ? { id: fieldIds[f]!, value } : { id: fieldIds[f]!, value, type };
    }
    for (const f of extras?.undefinedValues ?? []) out[f]!.value = undefined;
    return out;
  }

  get pending(): PendingLookup[] | undefined {
    return this.#mapped === undefined ? this.#extras?.pending : this.#mapped.pending;
  }

  get key(): string | undefined {
    if (this.#mapped !== undefined) return this.#mapped.key;
    return this.#job.packed.keys?.[this.#i] ?? undefined;
  }

  get hash(): string {
    if (this.#mapped !== undefined) return this.#mapped.hash;
    const { hash } = this.#job.packed;
    return typeof hash === 'string' ? hash : hash[this.#i]!;
  }

  /** What `JSON.stringify` writes of a row built whole. */
  toJSON(): BatchRow {
    return { index: this.index, source: this.source, mapped: this.mapped };
  }
}

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
