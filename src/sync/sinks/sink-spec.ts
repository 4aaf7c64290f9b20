/**
 * Sinks of the pull direction: worksheet rows written out to a postgres table, a CSV file
 * or an NDJSON file. Shapes exactly as a job spec writes them under `sink:`.
 */

/** Upsert into a postgres table by a key column. */
export interface PostgresSinkSpec {
  type: 'postgres';
  /** Name of the environment variable holding the connection URL. */
  urlEnv: string;
  /** `table` or `schema.table`. */
  table: string;
  /** Column with a unique constraint: a record with a key already present updates that row. */
  key: string;
  /**
   * Create the table when missing (key `text PRIMARY KEY`, other columns `jsonb` for
   * objects and arrays, `text` otherwise, typed from the first batch), and add columns
   * that later records bring. @defaultValue `false`
   */
  createTable?: boolean;
}

/**
 * A CSV file; the header is the first record's keys (or, when the run merges into or
 * appends to an existing file, that file's header).
 */
export interface CsvSinkSpec {
  type: 'csv';
  path: string;
  /**
   * Column(s) that identify a row: a row is held once, a later record of the same key
   * replacing it (see `SinkDeps.write`). Defaults to `SinkDeps.key`.
   */
  key?: string | string[];
  /** @defaultValue `','` */
  delimiter?: string;
  /**
   * Prefix text cells that start with `=`, `+`, `-`, `@`, tab or CR with `'`, so a
   * spreadsheet opening the file shows them instead of running them as formulas (CSV
   * injection: `=HYPERLINK(..)` in a worksheet cell). Numbers are left as they are.
   * @defaultValue `true`
   */
  formulaEscape?: boolean;
  /**
   * Times (DateTime fields and the system times alike): `wall`, the organisation's clock
   * as `YYYY-MM-DD HH:mm:ss`, or `iso`, ISO 8601 with its offset. @defaultValue `'wall'`
   */
  timeFormat?: 'wall' | 'iso';
}

/** One JSON object per line. */
export interface NdjsonSinkSpec {
  type: 'ndjson';
  path: string;
  /** As for the CSV sink. */
  key?: string | string[];
  /** As for the CSV sink. @defaultValue `'wall'` */
  timeFormat?: 'wall' | 'iso';
}

/** The Postgres type of a pulled column, from the worksheet field it comes from (pull-columns.ts). */
export type PullColumnType = 'numeric' | 'boolean' | 'date' | 'timestamptz' | 'jsonb';

export type SinkSpec = PostgresSinkSpec | CsvSinkSpec | NdjsonSinkSpec;

/**
 * Where records go. `write` calls land in call order; each resolves once its records are
 * stored (committed, or handed to the OS for files). `close` ends a run that read its
 * source through: its writes become the sink's content. `abort` ends a failed run: a file
 * sink drops what the run wrote and leaves the previous file as it was.
 */
export interface Sink {
  write(records: Array<Record<string, unknown>>): Promise<void>;
  close(): Promise<void>;
  abort(): Promise<void>;
}

/**
 * How a run's records meet what a file sink already holds (the postgres sink always
 * upserts by its key).
 * - `replace`: a full pull. The file is written aside and renamed over the old one on
 *   `close`, so a run that fails or dies leaves the previous complete file.
 * - `merge`: an incremental pull. Written aside and renamed the same way; the old file's
 *   rows are kept unless a record of the run has the same key. Needs a key.
 * - `append`: records are added to the end of the file as they come, as before `replace`
 *   and `merge` existed; a re-run holds its rows twice.
 * With a key, `replace` and `merge` also hold a key once when the run brings it twice
 * (rows shifting between the pages of a worksheet read): the last record wins.
 */
export type SinkWriteMode = 'replace' | 'merge' | 'append';

export interface SinkDeps {
  env: NodeJS.ProcessEnv;
  /** Folder of the job file: relative paths resolve against it. */
  baseDir: string;
  /**
   * See `SinkWriteMode`; `pullSinkOptions` derives it from a job.
   * @defaultValue `'merge'` when a key is known, else `'append'`
   */
  write?: SinkWriteMode | undefined;
  /** Key column(s) of a file sink whose spec names none. */
  key?: readonly string[] | undefined;
  /** Postgres: the type `createTable` gives a column; columns not named are text, or jsonb for objects. */
  columnTypes?: Readonly<Record<string, PullColumnType>> | undefined;
}
