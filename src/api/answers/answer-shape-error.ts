/**
 * An answer whose envelope said success but whose `data` the client cannot read: a
 * renamed key, a missing id. It extends ApiError so that `classifyError` knows its
 * category and a log line shows the request, but it is thrown after the exchange, so
 * the client's retry loop never repeats a request because of it.
 */
import { ApiError } from '../../ground/errors.ts';
import type { ErrorCategory, RowbridgeErrorCode } from '../../ground/errors.ts';

/** Where an answer came from: the client method and the request it made. */
export interface AnswerRef {
  /** The client method, for example `worksheets.get`. */
  operation: string;
  method: string;
  path: string;
}

export class AnswerShapeError extends ApiError {
  override name = 'AnswerShapeError';
  override readonly code: RowbridgeErrorCode = 'ROWBRIDGE_RESPONSE_ERROR';
  /** The client method whose answer did not fit. */
  readonly operation: string;

  /**
   * @param category What a caller does about it. @defaultValue 'unknown' (the answer
   * is not what the platform documents; repeating the request rarely changes that)
   */
  constructor(ref: AnswerRef, message: string, category: ErrorCategory = 'unknown') {
    super(`${ref.operation} (${ref.method} ${ref.path}): ${message}`, {
      method: ref.method,
      path: ref.path,
      category,
    });
    this.operation = ref.operation;
  }
}

/**
 * Batch create answered with another number of row ids than rows were sent. The rows
 * were most likely created, so the write is `ambiguous`: a caller reconciles (looks the
 * rows up by key) instead of sending them again.
 */
export class BatchCountMismatchError extends AnswerShapeError {
  override name = 'BatchCountMismatchError';
  readonly sent: number;
  readonly answered: number;

  constructor(ref: AnswerRef, sent: number, answered: number, key: string) {
    super(
      ref,
      `sent ${sent} rows but "${key}" holds ${answered} row ids: cannot tell which row got which id`,
      'ambiguous',
    );
    this.sent = sent;
    this.answered = answered;
  }
}

/** The keys of a value, for messages: `keys present: a, b, c` (at most 12). */
export function describeKeys(value: unknown): string {
  if (typeof value !== 'object' || value === null) return `got ${value === null ? 'null' : typeof value}`;
  if (Array.isArray(value)) return `got an array of ${value.length}`;
  const keys = Object.keys(value);
  if (keys.length === 0) return 'got an empty object';
  const shown = keys.slice(0, 12).map((key) => JSON.stringify(key));
  return `keys present: ${shown.join(', ')}${keys.length > 12 ? ', …' : ''}`;
}
