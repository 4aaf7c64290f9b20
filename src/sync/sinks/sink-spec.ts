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

/** A CSV file; the header is the first record's keys (or the existing file's header). */
export interface CsvSinkSpec {
  type: 'csv';
  path: string;
  /** @defaultValue `','` */
  delimiter?: string;
  /**
   * Prefix text cells that start with `=`, `+`, `-`, `@`, tab or CR with `'`, so a
   * spreadsheet opening the file shows them instead of running them as formulas (CSV
   * injection: `=HYPERLINK(..)` in a worksheet cell). Numbers are left as they are.
   * @defaultValue `true`
   */
  formulaEscape?: boolean;
}

/** One JSON object per line. */
export interface NdjsonSinkSpec {
  type: 'ndjson';
  path: string;
}

export type SinkSpec = PostgresSinkSpec | CsvSinkSpec | NdjsonSinkSpec;

/**
 * Where records go. `write` calls land in call order; each resolves once its records are
 * stored (committed, or handed to the OS for files). `close` flushes and releases.
 */
export interface Sink {
  write(records: Array<Record<string, unknown>>): Promise<void>;
  close(): Promise<void>;
}

export interface SinkDeps {
  env: NodeJS.ProcessEnv;
  /** Folder of the job file: relative paths resolve against it. */
  baseDir: string;
}
