/**
 * Option shapes of every source type, exactly as a job spec writes them under `source:`.
 * The job-spec loader validates these shapes; the sources trust them and only check what
 * a schema cannot (files exist, environment variables are set, responses have the shape).
 */
import type { Filter } from '../../api/types.ts';
import type { SourceRateLimit } from './source-rate-limit.ts';

/** Character sets a CSV file may be read in. */
export type CsvEncoding = 'utf8' | 'latin1' | 'gbk' | 'gb18030' | 'utf16le';

/** A CSV file read as a stream. */
export interface CsvSourceSpec {
  type: 'csv';
  /** File path; relative paths resolve against the job file's folder. */
  path: string;
  /** Absent: `,`, or `;` / tab when the first line has those and no `,` (csv-delimiter.ts). */
  delimiter?: string;
  /** @defaultValue `'"'` */
  quote?: string;
  /** When false, columns are named `col1..colN` (N from the first row). @defaultValue `true` */
  header?: boolean;
  /**
   * The file's character set: `gbk` / `gb18030` as Chinese Excel saves CSV, `utf16le` as
   * Excel's "Unicode text". A byte-order mark is skipped, and a UTF-8 or UTF-16 one wins
   * over this. @defaultValue `'utf8'`
   */
  encoding?: CsvEncoding;
  /** @defaultValue `true` */
  skipEmptyLines?: boolean;
}

/** One JSON object per line; blank lines are skipped. */
export interface NdjsonSourceSpec {
  type: 'ndjson';
  path: string;
}

/** A JSON document holding an array of objects, streamed element by element. */
export interface JsonSourceSpec {
  type: 'json';
  path: string;
  /** Dot path of object keys to the array (`"data.items"`); absent: the document is the array. */
  itemsPath?: string;
}

/** Page-number pagination: `?page=1&pageSize=100`, then 2, 3... until a short or empty page. */
export interface HttpPagePagination {
  type: 'page';
  /** @defaultValue `'page'` */
  pageParam?: string;
  /** @defaultValue `'pageSize'` */
  sizeParam?: string;
  /** @defaultValue `100` */
  pageSize?: number;
  /** @defaultValue `1` */
  startPage?: number;
}

/** Cursor pagination: the next cursor is read from the response at `cursorPath`. */
export interface HttpCursorPagination {
  type: 'cursor';
  /** Request parameter that carries the cursor (absent on the first request). */
  cursorParam: string;
  /** Dot path in the response body to the next cursor; missing, null or "" ends the scan. */
  cursorPath: string;
}

export interface HttpNoPagination {
  type: 'none';
}

export type HttpPagination = HttpPagePagination | HttpCursorPagination | HttpNoPagination;

/** A JSON API read page by page with undici. */
export interface HttpSourceSpec {
  type: 'http';
  url: string;
  /** With POST, paging parameters travel in a JSON body instead of the query string. @defaultValue `'GET'` */
  method?: 'GET' | 'POST';
  /** Values may hold `${ENV_NAME}` references; resolved values are secrets and never logged. */
  headers?: Record<string, string>;
  /** Values may hold `${ENV_NAME}` references too (API keys in query strings are common). */
  query?: Record<string, string>;
  /** Dot path in the response body to the array of items; absent: the body is the array. */
  itemsPath?: string;
  /** @defaultValue `{ type: 'none' }` */
  pagination?: HttpPagination;
  /** Stop after this many pages even if the API has more. */
  maxPages?: number;
  /** Longest wait for the connection (TCP and TLS). @defaultValue `10000` */
  connectTimeoutMs?: number;
  /** Longest wait for the response headers of a request. @defaultValue `60000` */
  headersTimeoutMs?: number;
  /** Longest pause between two pieces of a response body. @defaultValue `60000` */
  bodyTimeoutMs?: number;
  /** Largest response body read (256 MiB); a larger one fails the read. @defaultValue `268435456` */
  maxResponseBytes?: number;
  /** Pace and concurrency the API allows this job, across all workers (retries count). */
  rateLimit?: SourceRateLimit;
}

/**
 * A table or query read in order of `cursorColumn` by keyset pagination (short queries, no
 * transaction held open while the engine writes). Rows whose cursor column is NULL cannot
 * be ordered against a saved cursor and are not read: use a NOT NULL column.
 */
export interface SqlSourceSpec<T extends 'postgres' | 'mysql'> {
  type: T;
  /** Name of the environment variable holding the connection URL (never the URL itself). */
  urlEnv: string;
  /** `table` or `schema.table`; exactly one of `table` and `query`. */
  table?: string;
  /** A SELECT; it is wrapped as a subquery, so its columns must have distinct names. */
  query?: string;
  cursorColumn: string;
  /**
   * A unique column used as tiebreak: pages are keyed on (cursorColumn, keyColumn), and
   * `position.id` is its value. Without it rows sharing a cursor value are still all read:
   * the group of ties at a page edge is fetched whole (memory grows with the largest group).
   */
  keyColumn?: string;
  /** @defaultValue `1000` */
  batchSize?: number;
  /** two-way: the column holding when a row last changed (`conflict: newest` compares it). */
  updatedAtColumn?: string;
  /** two-way: env var with the URL writes connect with, when not `urlEnv`. */
  writeUrlEnv?: string;
  /**
   * two-way, PostgreSQL: the replication origin the job's writes to the table are marked
   * with, so that a postgres-cdc job capturing the table with the same `origin` drops them
   * (replication-origin.ts, docs/cdc.md).
   */
  origin?: string;
  /**
   * Read even when the login can do more than SELECT (a Postgres superuser or member of
   * pg_read_server_files, pg_write_server_files, pg_execute_server_program or
   * pg_signal_backend; a MySQL account with FILE, write or admin grants). The READ ONLY
   * transaction does not stop such a login reading files or running programs through
   * the query. @defaultValue `false`
   */
  allowPrivilegedSource?: boolean;
  /** Queries started per second and running at once, across all workers reading the job. */
  rateLimit?: SourceRateLimit;
}

export type PostgresSourceSpec = SqlSourceSpec<'postgres'>;
export type MysqlSourceSpec = SqlSourceSpec<'mysql'>;

/**
 * PostgreSQL change capture (docs/cdc.md): a snapshot of one table consistent with a
 * logical replication slot, then its inserts, updates and deletes streamed (pgoutput)
 * by one worker at a time.
 */
export interface PostgresCdcSourceSpec {
  type: 'postgres-cdc';
  /** Name of the environment variable holding the connection URL (never the URL itself). */
  urlEnv: string;
  /** `table` or `schema.table`. */
  table: string;
  /** The table's primary key column: a change names its row by it. */
  keyColumn: string;
  /** The logical replication slot (pgoutput) the changes are read from. */
  slot: string;
  /** The publication naming the table. */
  publication: string;
  /** Rows per snapshot page. @defaultValue `1000` */
  batchSize?: number;
  /**
   * The replication origin rowbridge's own writes to the table carry (a two-way job with
   * the same `origin`): transactions carrying it are not captured. Absent: none dropped.
   */
  origin?: string;
  /** Read even when the login is a superuser (a REPLICATION role alone is accepted). @defaultValue `false` */
  allowPrivilegedSource?: boolean;
}

/** Another application's worksheet (cross-system record sync). */
export interface WorksheetSourceSpec {
  type: 'worksheet';
  /** Worksheet id or alias. */
  worksheet: string;
  /** View id: the view's own filter and sort apply. */
  view?: string;
  filter?: Filter;
  /** Field ids or aliases to read; absent: all fields. */
  fields?: string[];
  /** Prefix of the environment variables holding the other application's credentials. */
  credentialsEnvPrefix?: string;
  /**
   * `person`: option texts, member names, relation titles, numbers as numbers (see
   * person-values.ts); `raw`: the platform's read shapes as received. @defaultValue 'person'
   */
  values?: 'person' | 'raw';
}

/**
 * One stream of a Singer tap's output, read by `tap | rowbridge singer JOB` (docs/singer.md):
 * the command cuts stdin into chunks at the tap's STATE messages and runs each chunk.
 */
export interface SingerSourceSpec {
  type: 'singer';
  /** The `stream` of the tap's SCHEMA and RECORD messages this job writes; other streams are skipped. */
  stream: string;
}

export type SourceSpec =
  | SingerSourceSpec
  | CsvSourceSpec
  | NdjsonSourceSpec
  | JsonSourceSpec
  | HttpSourceSpec
  | PostgresSourceSpec
  | MysqlSourceSpec
  | PostgresCdcSourceSpec
  | WorksheetSourceSpec;
