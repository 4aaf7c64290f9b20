/**
 * Errors of the sources. A `SourceError` stops the read (bad settings, unreadable file,
 * an API that keeps failing); a record the source can place but not read is not thrown
 * but yielded with `error` set (see `SourceItem`), so the engine dead-letters that one
 * record and reads on. Messages name the file/URL, line, field and what is allowed, and
 * never carry a credential: URLs lose their query string and user info first.
 */
import { RowbridgeError } from '../../ground/errors.ts';
import type { ErrorCategory } from '../../ground/errors.ts';
import type { SourceRecord } from '../model/types.ts';

export type SourceErrorCode =
  /** The job's source settings cannot work (missing env var, file not found, bad path). */
  | 'SOURCE_CONFIG'
  /** The data is malformed beyond one record (broken CSV quoting, JSON structure). */
  | 'SOURCE_FORMAT'
  /** The remote system failed (HTTP status, database error) after any retries. */
  | 'SOURCE_UNAVAILABLE';

export class SourceError extends RowbridgeError {
  override readonly name = 'SourceError';
  override readonly code: SourceErrorCode;
  /**
   * Settings and malformed data are `config` (fixing them is the user's move: the run
   * fails at once); an HTTP 401/403 is `auth`/`forbidden`; anything else the remote
   * system did is `transient`.
   */
  override readonly category: ErrorCategory;
  /** HTTP status of the last failed request, for `SOURCE_UNAVAILABLE` from the http source. */
  readonly status: number | undefined;

  constructor(code: SourceErrorCode, message: string, options: { cause?: unknown; status?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.category = sourceCategory(code, options.status);
  }
}

/** Why one record could not be read. */
export interface SourceRecordError {
  /** `SOURCE_RECORD_INVALID`: the engine dead-letters the record with this code. */
  code: 'SOURCE_RECORD_INVALID';
  /** Names the file, the line and what is wrong, e.g. `data.csv line 12: 4 fields, header has 3`. */
  message: string;
}

/**
 * What a source yields: a record, or, with `error` set and `data` empty, a record that
 * could not be parsed. Assignable to `SourceRecord`, so a consumer that ignores `error`
 * still type-checks; the engine must check it.
 */
export interface SourceItem extends SourceRecord {
  error?: SourceRecordError;
  /**
   * With `error`: the columns the source has (a CSV header), so the mapped-column check
   * (source-columns.ts) can judge a file whose every row is malformed.
   */
  columns?: readonly string[];
}

/** A record-level failure at a position; `columns`, when the source knows its columns. */
export function invalidRecord(
  position: SourceRecord['position'],
  message: string,
  columns?: readonly string[],
): SourceItem {
  const item: SourceItem = { data: {}, position, error: { code: 'SOURCE_RECORD_INVALID', message } };
  if (columns !== undefined) item.columns = columns;
  return item;
}

function sourceCategory(code: SourceErrorCode, status: number | undefined): ErrorCategory {
  if (code !== 'SOURCE_UNAVAILABLE') return 'config';
  if (status === 401) return 'auth';
  if (status === 403) return 'forbidden';
  // Another 4xx (a wrong URL, a refused query) will not mend by asking again; 408 and 429 may.
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429)
    return 'config';
  return 'transient';
}
