/**
 * Opens a batch job's columns (./columnar-rows.ts) as the rows a worker writes: views,
 * private to this module, read through {@link RowToWrite}.
 */
import type { FieldValue } from '../../api/types.ts';
import type { BatchRow, RowToWrite } from './batch-row.ts';
import type { ColumnarRows, RowExtras } from './columnar-rows.ts';
import { isJoined, JoinedColumn } from './joined-column.ts';
import type { Joined } from './joined-column.ts';
import type { MappedRow, PendingLookup } from '../mapping/map-result.ts';
import type { SourcePosition, SourceRecord } from '../model/types.ts';

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
