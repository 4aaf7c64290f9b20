/**
 * The one error taxonomy of rowbridge (modelled on undici's lib/core/errors.js), in the
 * ground layer so every layer can use it: a base error with a stable string `code` and
 * a category, one table from every platform error code (spec §7) to a category, ONE
 * table saying what the client, a run and a batch do with each category, and one
 * function that classifies any thrown value. Errors carry what a caller needs (method,
 * path, errorCode, category, retryAfterMs) and never credentials or a full body.
 */

export const ERROR_CATEGORIES = [
  'throttled',
  'transient',
  'ambiguous',
  'auth-refresh',
  'auth',
  'config',
  'forbidden',
  'app-unavailable',
  'invalid-row',
  'conflict',
  'not-found',
  'quota',
  'unknown',
] as const;

export type ErrorCategory = (typeof ERROR_CATEGORIES)[number];

/** What the client and the sync engine do with an error of a category. */
export interface CategoryPolicy {
  /**
   * `backoff`: retry with full-jitter exponential backoff inside the time budget;
   * `pace`: retry once the shared rate budget allows, without charging an attempt;
   * `refresh`: refresh the access token, then retry;
   * `reconcile`: never retried blindly, the caller looks the write up first;
   * `never`: fail at once.
   */
  retry: 'backoff' | 'pace' | 'refresh' | 'reconcile' | 'never';
  /**
   * What a run does when reading, planning or finalizing meets it: `fail` at once (it is
   * deterministic: a missing file, a bad header, a 401; the run stays resumable once the
   * cause is fixed) or `retry` the run job with backoff.
   */
  run: 'fail' | 'retry';
  /**
   * What a batch does when writing meets it: `stop-run` (one message for the run),
   * `delay` (put back without charging an attempt: the shared limiter slows everyone),
   * `pause` (put back for a while, a bounded number of times, then stop the run), or
   * `retry` with backoff and dead-letter the rows left open on the last attempt.
   * A platform code may override it ({@link PLATFORM_ERROR_CODES}).
   */
  batch: BatchPolicy;
}

/** What a batch does when writing meets an error (see {@link CategoryPolicy.batch}). */
export type BatchPolicy = 'stop-run' | 'delay' | 'pause' | 'retry';

export const CATEGORY_POLICY: Readonly<Record<ErrorCategory, CategoryPolicy>> = {
  throttled: { retry: 'pace', run: 'retry', batch: 'delay' },
  transient: { retry: 'backoff', run: 'retry', batch: 'retry' },
  ambiguous: { retry: 'reconcile', run: 'retry', batch: 'retry' },
  'auth-refresh': { retry: 'refresh', run: 'retry', batch: 'retry' },
  auth: { retry: 'never', run: 'fail', batch: 'stop-run' },
  config: { retry: 'never', run: 'fail', batch: 'stop-run' },
  forbidden: { retry: 'never', run: 'fail', batch: 'stop-run' },
  'app-unavailable': { retry: 'never', run: 'retry', batch: 'pause' },
  'invalid-row': { retry: 'never', run: 'fail', batch: 'retry' },
  conflict: { retry: 'never', run: 'fail', batch: 'retry' },
  'not-found': { retry: 'never', run: 'fail', batch: 'retry' },
  quota: { retry: 'never', run: 'fail', batch: 'stop-run' },
  // An unknown code is most likely a new business failure: retrying it a few times is
  // safe for reads and for writes that the server answered (it did not apply them).
  unknown: { retry: 'backoff', run: 'retry', batch: 'retry' },
};

/**
 * Every error code of spec §7 with its category and meaning, and where one code of a
 * category calls for other batch behaviour than its category's, that `batch` policy.
 */
export const PLATFORM_ERROR_CODES: Readonly<
  Record<number, { category: ErrorCategory; meaning: string; batch?: BatchPolicy }>
> = {
  0: { category: 'unknown', meaning: 'failure' },
  51: { category: 'throttled', meaning: 'request rate limited' },
  10000: { category: 'forbidden', meaning: 'access denied, IP restricted' },
  10001: { category: 'invalid-row', meaning: 'parameter error' },
  10002: { category: 'invalid-row', meaning: 'parameter value error' },
  10005: { category: 'forbidden', meaning: 'no permission for the data operation' },
  10006: { category: 'conflict', meaning: 'data already exists' },
  10007: { category: 'not-found', meaning: 'data does not exist or was deleted' },
  10101: { category: 'auth', meaning: 'token does not exist' },
  10102: { category: 'auth', meaning: 'signature invalid' },
  10105: { category: 'auth-refresh', meaning: 'user access token invalid' },
  10106: { category: 'auth', meaning: 'user access token restricted for the organization' },
  100005: { category: 'invalid-row', meaning: 'duplicate field value' },
  100006: { category: 'invalid-row', meaning: 'option count has reached its limit' },
  100007: { category: 'invalid-row', meaning: 'attachment count has reached its limit' },
  // A worksheet that is gone stops the run: every batch would fail alike. A row that is
  // gone (10007) is the row's business: its batch retries and dead-letters it.
  430013: { category: 'not-found', meaning: 'application has no such worksheet', batch: 'stop-run' },
  430014: { category: 'forbidden', meaning: 'insufficient worksheet field permission' },
  430017: { category: 'quota', meaning: 'application attachment upload quota insufficient' },
  430018: { category: 'quota', meaning: 'draft-box record count has reached its limit' },
  430019: { category: 'invalid-row', meaning: 'required field value is empty' },
  430020: { category: 'invalid-row', meaning: 'sub-table data error' },
  430021: { category: 'invalid-row', meaning: 'data does not satisfy business rules' },
  430022: { category: 'not-found', meaning: 'worksheet does not exist', batch: 'stop-run' },
  90000: { category: 'throttled', meaning: 'number of requests exceeds the limit' },
  99999: { category: 'transient', meaning: 'data operation exception' },
  600100: { category: 'auth-refresh', meaning: 'access token missing, expired or with invalid signature' },
  600101: { category: 'auth', meaning: 'authorization ended, or scope changed without new authorization' },
  600102: { category: 'auth', meaning: 'refresh token invalid, revoked or unusable' },
  600103: { category: 'auth', meaning: 'refresh token cannot obtain a new token' },
  600104: { category: 'auth', meaning: 'authorization relationship does not exist' },
  600300: { category: 'app-unavailable', meaning: 'integrated application disabled' },
  600302: { category: 'app-unavailable', meaning: 'integrated application unavailable' },
  600311: { category: 'auth', meaning: 'requested scope illegal: not configured or nonexistent' },
  600312: { category: 'auth', meaning: 'application scope changed; re-authorize' },
  600320: { category: 'forbidden', meaning: 'the user may not act on the resource' },
  600000: { category: 'config', meaning: 'authorize or token request parameters invalid' },
  600001: { category: 'config', meaning: 'redirect_uri does not match the configured one' },
  600002: { category: 'config', meaning: 'authorization code invalid, expired or already used' },
  600003: { category: 'config', meaning: 'user cancelled on the authorization page' },
  600004: { category: 'config', meaning: 'state check failed' },
  600112: { category: 'config', meaning: 'client_id or client_secret wrong' },
  600113: { category: 'forbidden', meaning: 'client IP not on the allow-list' },
};

/** Category of a platform error code; unknown codes get the `unknown` category. */
export function categoryOfCode(errorCode: number): ErrorCategory {
  return PLATFORM_ERROR_CODES[errorCode]?.category ?? 'unknown';
}

export type RowbridgeErrorCode =
  'ROWBRIDGE_API_ERROR' | 'ROWBRIDGE_CONFIG_ERROR' | 'ROWBRIDGE_RESPONSE_ERROR' | 'ROWBRIDGE_NETWORK_ERROR';

/**
 * Base of every error class of rowbridge (source, sink, job spec, mapping, config, API):
 * `code` is stable and safe to match on, `category` is a category of the taxonomy, so
 * {@link CATEGORY_POLICY} decides what a run and a batch do with it.
 */
export class RowbridgeError extends Error {
  override name = 'RowbridgeError';
  readonly code: string = 'ROWBRIDGE_API_ERROR';
  readonly category: ErrorCategory = 'unknown';

  /**
   * What a batch does with this error, when not what its category says: a platform code
   * of the table may override it, as may an error that always stops the run.
   */
  get batchPolicy(): BatchPolicy {
    return CATEGORY_POLICY[this.category].batch;
  }
}

/** Where a request went; never its headers or body. */
export interface RequestRef {
  method: string;
  path: string;
}

export interface ApiErrorInit extends RequestRef {
  category: ErrorCategory;
  errorCode?: number;
  httpStatus?: number;
  retryAfterMs?: number;
  cause?: unknown;
}

/** The platform (or the network on the way to it) refused or failed a request. */
export class ApiError extends RowbridgeError {
  override name = 'ApiError';
  override readonly code: RowbridgeErrorCode = 'ROWBRIDGE_API_ERROR';
  override readonly category: ErrorCategory;
  readonly errorCode: number | undefined;
  readonly httpStatus: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly method: string;
  readonly path: string;

  constructor(message: string, init: ApiErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.category = init.category;
    this.errorCode = init.errorCode;
    this.httpStatus = init.httpStatus;
    this.retryAfterMs = init.retryAfterMs;
    this.method = init.method;
    this.path = init.path;
  }

  get policy(): CategoryPolicy {
    return { ...CATEGORY_POLICY[this.category], batch: this.batchPolicy };
  }

  override get batchPolicy(): BatchPolicy {
    const code = this.errorCode === undefined ? undefined : PLATFORM_ERROR_CODES[this.errorCode];
    // A code's override holds only for the category it was classified as (a 430022 that
    // came back as a network failure is not a missing worksheet).
    return (code?.category === this.category ? code.batch : undefined) ?? super.batchPolicy;
  }
}

/** A setting is missing or wrong: nothing was sent (or the OAuth flow refused it). */
export class ConfigError extends RowbridgeError {
  override name = 'ConfigError';
  override readonly code: string = 'ROWBRIDGE_CONFIG_ERROR';
  override readonly category: ErrorCategory = 'config';
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError;
}

/** Error codes of undici and node that happen before a request reaches the server. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CLOSED',
  'UND_ERR_DESTROYED',
]);

function errnoCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  return errnoCode((err as { cause?: unknown }).cause);
}

/**
 * Turns a network-level failure into an ApiError. A failure before the request was
 * sent is transient; after it (reset, timeout waiting for the answer) a write's
 * outcome is unknown, so it is ambiguous, while a read can simply be retried.
 */
export function networkError(err: unknown, ref: RequestRef & { isWrite: boolean }): ApiError {
  const code = errnoCode(err) ?? 'UNKNOWN';
  const sent = !NOT_SENT_CODES.has(code);
  const category: ErrorCategory = sent && ref.isWrite ? 'ambiguous' : 'transient';
  const when = sent ? 'after the request was sent' : 'before the request was sent';
  return new ApiError(`${ref.method} ${ref.path}: network failure ${when} (${code})`, {
    method: ref.method,
    path: ref.path,
    category,
    cause: err,
  });
}

/** System errors that retrying will not mend: the file or the permission is missing. */
const DETERMINISTIC_SYSTEM_CODES: ReadonlySet<string> = new Set([
  'ENOENT',
  'EACCES',
  'EPERM',
  'EISDIR',
  'ENOTDIR',
]);

/**
 * Category of any thrown value: rowbridge's errors carry theirs; a system error on a
 * missing file or permission is `config`, one on the network `transient`; anything
 * else (a bug, an unexpected library error) is `unknown`.
 */
export function classifyError(err: unknown): ErrorCategory {
  if (err instanceof RowbridgeError) return err.category;
  const code = errnoCode(err);
  if (code !== undefined && DETERMINISTIC_SYSTEM_CODES.has(code)) return 'config';
  if (code !== undefined && (NOT_SENT_CODES.has(code) || code === 'ECONNRESET' || code === 'ETIMEDOUT'))
    return 'transient';
  return 'unknown';
}

/** What the run and a batch do with an error, from the tables (a code's override included). */
export function policyOf(err: unknown): CategoryPolicy & { category: ErrorCategory } {
  const category = classifyError(err);
  const policy = { ...CATEGORY_POLICY[category], category };
  if (err instanceof RowbridgeError) policy.batch = err.batchPolicy;
  return policy;
}

/** Keeps the original as `cause` (graphile-worker's coerceError). */
export function coerceError(err: unknown): Error {
  if (err instanceof Error) return err;
  return new Error(typeof err === 'string' ? err : `non-error thrown: ${JSON.stringify(err)}`, {
    cause: err,
  });
}
