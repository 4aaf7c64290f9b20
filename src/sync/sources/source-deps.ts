/** What `createSource` needs besides the spec: where to find things and what was read before. */
import type { Filter } from '../../api/types.ts';
import type { NormalisedRow } from '../../api/types.ts';
import type { SourceGate } from './source-rate-limit.ts';

/** What the worksheet source asks the other application's client for. */
export interface WorksheetReadQuery {
  worksheet: string;
  view?: string;
  filter?: Filter;
  fields?: string[];
  /** Passed through so the engine can pick the other application's credentials. */
  credentialsEnvPrefix?: string;
  /** @defaultValue 'person' */
  values?: 'person' | 'raw';
  /** Multi-value fields in the person form: joined with ", ", or an array (person-values.ts). @defaultValue 'joined' */
  lists?: 'joined' | 'array';
  signal?: AbortSignal;
  /**
   * Called once, before the first page is asked for, with the platform's time then (the
   * reading client's `serverTime()`: undefined when no answer has carried a `Date`).
   */
  onScanStart?: (platformTime: number | undefined) => void;
}

/** Reads every row of a worksheet, page by page; wired by the engine to an API client. */
export type ReadWorksheetRows = (query: WorksheetReadQuery) => AsyncIterable<NormalisedRow>;

/** Retry tuning of the http source; the defaults suit production, tests shorten them. */
export interface HttpRetryOptions {
  /** Retries after the first attempt. @defaultValue `3` */
  retries?: number;
  /** Delay before the first retry, doubled each time. @defaultValue `500` */
  minTimeoutMs?: number;
  /** Cap of one delay, also of an honoured `Retry-After`. @defaultValue `10000` */
  maxTimeoutMs?: number;
}

export interface SourceDeps {
  /** Environment the `${ENV}` references, `urlEnv` and credentials are read from. */
  env: NodeJS.ProcessEnv;
  /** Folder of the job file: relative paths resolve against it. */
  baseDir: string;
  /** Saved incremental cursor: only records with a cursor past it are read. */
  since?: unknown;
  /**
   * Makes `since` inclusive (`cursor >= since`): the first chunk of a backfill starts at
   * the range's own `--from` value. @defaultValue `false`
   */
  sinceInclusive?: boolean | undefined;
  /**
   * Inclusive upper bound of a backfill chunk: only records with a cursor `<= until` are
   * read, and records without a cursor value are skipped (they belong to no range). File
   * and http sources then need `cursorField`. See `splitRange` (../split-range.ts).
   */
  until?: unknown;
  /**
   * Reading a row again is harmless (the run upserts by key): a worksheet source read by
   * `_updatedAt` then reports no cursor past its scan's start on the platform's clock, less
   * `ROWBRIDGE_CURSOR_MARGIN_SECONDS` (worksheet-source.ts), so a row edited during the
   * scan is read again next run.
   * @defaultValue `false`
   */
  capCursorAtScanStart?: boolean | undefined;
  /**
   * When the read began (epoch ms, this machine's clock), for `capCursorAtScanStart`: a
   * read resumed after a crash gives its first attempt's start. @defaultValue the moment
   * the scan starts
   */
  scanStartedAt?: number | undefined;
  /**
   * Only the records with one of these source ids (`position.id`): a dead-letter replay
   * reads its rows again as the source has them now. SQL sources match their
   * `keyColumn`, worksheet sources the row id; others do not support it.
   */
  ids?: readonly string[] | undefined;
  /**
   * The job's incremental cursor field (`incremental.cursor`): the data key compared with
   * `since` in file, http and worksheet sources. SQL sources use `cursorColumn` instead.
   */
  cursorField?: string | undefined;
  /** Required by the worksheet source. */
  readWorksheetRows?: ReadWorksheetRows | undefined;
  /** How a worksheet source writes multi-value fields: a Postgres pull keeps them apart for jsonb. */
  worksheetLists?: 'joined' | 'array' | undefined;
  /**
   * The organisation's zone: a zone-less `since`/`until` on a worksheet's `_updatedAt`
   * (`--from "2025-03-18 16:00:00"`) is a wall clock of the platform, not of this process.
   */
  platformTimeZone?: string | undefined;
  /** Stops the read between records (and aborts http requests in flight). */
  signal?: AbortSignal | undefined;
  httpRetry?: HttpRetryOptions | undefined;
  /**
   * The job's `source.rateLimit` shared with every worker reading its chunks (one
   * Bottleneck per job in Redis, made by the runtime). Without it an http or SQL source
   * with a rateLimit keeps it within this read only.
   */
  sourceGate?: SourceGate | undefined;
  /**
   * A singer source: the file the `singer` command staged one chunk of the tap's records
   * in (singer-source.ts). Without it a singer job has nothing to read.
   */
  singerChunk?: string | undefined;
}
