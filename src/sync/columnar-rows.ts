import type { FieldValue } from '../api/types.ts';
import type { BatchRow } from './batch-row.ts';
import type { MappedRow, PendingLookup } from './mapping/map-result.ts';
import type { SourcePosition, SourceRecord } from './types.ts';

/**
 * Batch rows by column (batch job rows formats 3 and 4): what a file import's batch job carries.
 * Each source column and each field is one array for the whole job, instead of an array
 * per row (format 2, ./packed-rows.ts): BullMQ's stringify of the job in the reader and
 * its parse in the worker go over five arrays instead of thousands, and
 *
 * - a field that is its column's own text for every row is written as that column (`{c}`);
 * - a field whose every value is one option, relation or member id (`["id"]`) is written
 *   as indexes into the job's distinct ids (`{d, r}`);
 * - consecutive indexes, lines at a constant distance from them, no keys and one hash
 *   are written once;
 * - (format 4) a column or field of strings, none holding DEL, is one string of its
 *   values joined by DEL (`{j}`): the worker's parse makes one string where it made one
 *   per row, each alive for the whole job (see {@link JoinedColumn}). Format 3 is the
 *   same without `{j}`, and is read the same way.
 *
 * On 1,000 orders rows (bench/import.ts): 155 → 86 KB of job data, pack and stringify
 * 0.68 → 0.27 ms, parse and unpack 0.69 → 0.36 ms (format 3).
 *
 * Only regular batches are written this way: every record's data has exactly the job's
 * columns, no row has a page, a source id, a cursor, write types or pending lookups, and
 * no value is `undefined`. {@link packColumns} returns `undefined` for any other batch,
 * which is then written in format 2. {@link unpackColumns} gives back what
 * `unpackRows` gives for format 2, after the same JSON round trip.
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
  /** Column c of row i's data: `values[c][i]`, or the i-th of a {@link Joined} column (format 4). */
  values: Array<unknown[] | Joined>;
  fieldIds: string[];
  fields: ColumnarField[];
}

/**
 * Strings joined by {@link SEPARATOR} (format 4): a column of strings, none holding the
 * separator, is one string in the job instead of one per row.
 */
export interface Joined {
  j: string;
}

/** A field's values: column c's, `[d[r[i]]]`, as they are, or joined strings (format 4). */
export type ColumnarField = { c: number } | { d: string[]; r: number[] } | Joined | unknown[];

/**
 * DEL: printable for JSON (no escape, one byte), and not in text people write. A column
 * with a value that holds it stays an array.
 */
const SEPARATOR = '\u007f';

/** `column` as one string when every value is a string without {@link SEPARATOR}. */
function joined(column: unknown[]): unknown[] | Joined {
  for (const value of column) if (typeof value !== 'string' || value.includes(SEPARATOR)) return column;
  return { j: (column as string[]).join(SEPARATOR) };
}

function isJoined(value: unknown): value is Joined {
  return typeof (value as Partial<Joined> | null)?.j === 'string';
}

function isOneId(value: unknown): value is [string] {
  return Array.isArray(value) && value.length === 1 && typeof value[0] === 'string';
}

/**
 * Whether `data`'s own keys are exactly `columns`, in order, none holding `undefined`
 * (which JSON drops from an object but writes as `null` in an array).
 */
export function hasColumns(data: Record<string, unknown>, columns: readonly string[]): boolean {
  let i = 0;
  for (const key in data) {
    if (!Object.hasOwn(data, key)) continue;
    if (columns[i] !== key || data[key] === undefined) return false;
    i += 1;
  }
  return i === columns.length;
}

/** Whether a row fits format 3 beside the job's first row. */
function isRegular(row: BatchRow, columns: readonly string[], fieldIds: readonly string[]): boolean {
  const { source, mapped } = row;
  const { position } = source;
  if (position.page !== undefined || position.id !== undefined || source.cursor !== undefined) return false;
  if (mapped.pending !== undefined) return false;
  if (mapped.fields.length !== fieldIds.length) return false;
  for (let f = 0; f < fieldIds.length; f++) {
    const field = mapped.fields[f]!;
    if (field.id !== fieldIds[f] || field.type !== undefined || field.value === undefined) return false;
  }
  return hasColumns(source.data, columns);
}

/**
 * `rows` by column, or `undefined` when they are not regular (see {@link ColumnarRows}).
 * `fieldSources` names the column each mapped field is read from (the plan's `column`).
 */
export function packColumns(
  rows: readonly BatchRow[],
  fieldSources: ReadonlyArray<string | undefined> = [],
): ColumnarRows | undefined {
  const head = rows[0];
  if (head === undefined) return undefined;
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
  for (let i = 0; i < n; i++) {
    const row = rows[i]!;
    if (!isRegular(row, columns, fieldIds)) return undefined;
    const { index, source, mapped } = row;
    indexes[i] = index;
    if (index !== head.index + i) consecutive = false;
    const line = source.position.line ?? null;
    lines[i] = line;
    if (line === null || lineOffset === undefined || line - index !== lineOffset) lineOffset = undefined;
    keys[i] = mapped.key ?? null;
    if (mapped.key !== undefined) anyKey = true;
    hashes[i] = mapped.hash;
    if (mapped.hash !== head.mapped.hash) oneHash = false;
    const { data } = source;
    for (let c = 0; c < columns.length; c++) values[c]![i] = data[columns[c]!];
    const { fields } = mapped;
    for (let f = 0; f < fields.length; f++) fieldValues[f]![i] = fields[f]!.value;
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
  };
}

/**
 * The rows of a format-3 job, as `unpackRows` gives those of format 2, each a view of the
 * job's columns: `source` and `mapped` are built from them at each read, as plain objects.
 *
 * Why views: a batch job's rows live from the job's start to the answer of its last
 * request and its bookkeeping (tens of ms, several Redis and HTTP round trips). V8
 * promotes what outlives two young-generation collections, and with rows built whole
 * (about ten objects and 650 bytes a row) that was 650 of the 1,660 MB promoted in a
 * 1M-row import: old-generation garbage that sets the process's peak memory. A view is
 * one small object; what is built from it at a read is used at once and dies young.
 * Reads are few per row (the request body, the bookkeeping of its outcome).
 */
export function unpackColumns(packed: ColumnarRows): BatchRow[] {
  const open = <T>(column: T | Joined): T | JoinedColumn =>
    isJoined(column) ? new JoinedColumn(column.j, packed.n) : column;
  const job: OpenJob = { packed, values: packed.values.map(open), fields: packed.fields.map(open) };
  const out = new Array<BatchRow>(packed.n);
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

/**
 * A {@link Joined} column, read value by value: where each value starts is found once
 * (in an Int32Array, outside the heap's objects), and a value is cut from the string at
 * each read. Thousands of short strings alive for the whole job were what V8 promoted
 * most of a job's data (195 of 1,090 MB in a 1M-row import).
 */
class JoinedColumn {
  readonly #text: string;
  /** Start of value i, and one past the end of the last plus one at `[n]`. */
  readonly #starts: Int32Array;

  constructor(text: string, n: number) {
    const starts = new Int32Array(n + 1);
    let at = 0;
    for (let i = 0; i < n; i++) {
      if (at > text.length)
        throw new Error(`batch job data: a joined column holds fewer than its ${n} values`);
      starts[i] = at;
      const end = text.indexOf(SEPARATOR, at);
      at = end < 0 ? text.length + 1 : end + 1;
    }
    if (at !== text.length + 1)
      throw new Error(`batch job data: a joined column holds more than its ${n} values`);
    starts[n] = at;
    this.#text = text;
    this.#starts = starts;
  }

  at(i: number): string {
    return this.#text.slice(this.#starts[i], this.#starts[i + 1]! - 1);
  }
}

function cell(column: Column, i: number): unknown {
  return Array.isArray(column) ? column[i] : column.at(i);
}

/** Row i of a format-3 job (see {@link unpackColumns}). */
class ColumnarRow implements BatchRow {
  readonly index: number;
  readonly #job: OpenJob;
  readonly #i: number;
  /** A mapping assigned by the code that writes (lookups resolved), kept as given. */
  #mapped: MappedRow | undefined;

  constructor(job: OpenJob, i: number) {
    const { packed } = job;
    this.#job = job;
    this.#i = i;
    this.index = packed.indexes === undefined ? packed.first + i : packed.indexes[i]!;
  }

  /** `source.position` (and `mapped.position`), without building the rest. */
  get position(): SourcePosition {
    const { lineOffset, lines } = this.#job.packed;
    const position: SourcePosition = { index: this.index };
    const line = lineOffset === undefined ? (lines?.[this.#i] ?? null) : this.index + lineOffset;
    if (line !== null) position.line = line;
    return position;
  }

  get source(): SourceRecord {
    const { columns } = this.#job.packed;
    const { values } = this.#job;
    const data: Record<string, unknown> = {};
    for (let c = 0; c < columns.length; c++) data[columns[c]!] = cell(values[c]!, this.#i);
    return { data, position: this.position };
  }

  get mapped(): MappedRow {
    if (this.#mapped !== undefined) return this.#mapped;
    const mapped: MappedRow = { ok: true, fields: this.fields, hash: this.hash, position: this.position };
    const { key } = this;
    if (key !== undefined) mapped.key = key;
    return mapped;
  }

  /** `mapped.fields`, without the rest. */
  get fields(): FieldValue[] {
    if (this.#mapped !== undefined) return this.#mapped.fields;
    const { fieldIds } = this.#job.packed;
    const { values, fields } = this.#job;
    const i = this.#i;
    const out = new Array<FieldValue>(fields.length);
    for (let f = 0; f < fields.length; f++) {
      const field = fields[f]!;
      const value =
        Array.isArray(field) || field instanceof JoinedColumn
          ? cell(field, i)
          : 'c' in field
            ? cell(values[field.c]!, i)
            : [field.d[field.r[i]!]!];
      out[f] = { id: fieldIds[f]!, value };
    }
    return out;
  }

  /** `mapped.pending`: rows with lookups to resolve are never written by column. */
  get pending(): PendingLookup[] | undefined {
    return this.#mapped?.pending;
  }

  set mapped(mapped: MappedRow) {
    this.#mapped = mapped;
  }

  /** `mapped.key`, without building the fields. */
  get key(): string | undefined {
    if (this.#mapped !== undefined) return this.#mapped.key;
    return this.#job.packed.keys?.[this.#i] ?? undefined;
  }

  /** `mapped.hash`, without building the fields. */
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

/** What a row's bookkeeping reads (key index, outcomes, dead letters): no fields, no data. */
export interface RowMarks {
  position: SourcePosition;
  key: string | undefined;
  hash: string;
  pending: PendingLookup[] | undefined;
}

/**
 * A row's position, key, hash and pending lookups, read without building a view's source
 * and fields: classifying rows and recording what landed read only these, several times
 * a row.
 */
export function marksOf(row: BatchRow): RowMarks {
  if (row instanceof ColumnarRow) return row;
  const { mapped } = row;
  return { position: row.source.position, key: mapped.key, hash: mapped.hash, pending: mapped.pending };
}

/** `row.mapped.fields`, without building the rest of a view's mapping (request bodies). */
export function fieldsOf(row: BatchRow): FieldValue[] {
  return row instanceof ColumnarRow ? row.fields : row.mapped.fields;
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

/** The row indexes of a format-3 job (for summaries). */
export function columnarIndexes(packed: ColumnarRows): number[] {
  return packed.indexes ?? Array.from({ length: packed.n }, (_, i) => packed.first + i);
}
