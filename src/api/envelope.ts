import { ApiError, PLATFORM_ERROR_CODES, categoryOfCode } from '../ground/errors.ts';
import type { ErrorCategory, RequestRef } from '../ground/errors.ts';
import type { Envelope } from './types.ts';

/** A raw answer as the transport hands it over. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON, or the text when the body was not JSON. */
  body: unknown;
  /** False when the body could not be parsed as JSON. */
  json: boolean;
}

const MAX_MESSAGE = 200;

function clip(text: string): string {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
}

/** Retry-After in ms: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || raw.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(raw.trim())) return Math.round(Number(raw) * 1000);
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function httpCategory(status: number, isWrite: boolean): ErrorCategory {
  if (status === 429) return 'throttled';
  // A gateway that timed out waiting may have let the write through (platform notes §1).
  if ((status === 504 || status === 408) && isWrite) return 'ambiguous';
  if (status >= 500 || status === 408) return 'transient';
  if (status === 401) return 'auth';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not-found';
  if (status === 413) return 'invalid-row';
  return 'unknown';
}

/** The keys that make a JSON object an answer envelope in any of its spellings. */
const ENVELOPE_KEYS = ['success', 'error_code', 'code', 'errorCode', 'state', 'data'] as const;

function isEnvelope(body: unknown): body is Envelope {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  return ENVELOPE_KEYS.some((key) => key in body);
}

/** The envelope's code and text, whichever spelling the answer used. */
export interface EnvelopeStatus {
  ok: boolean;
  code: number | undefined;
  message: string;
}

function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) return Number(value);
  return undefined;
}

/**
 * Reads success, code and text from an envelope (platform-shapes §2, client rule [L]):
 * ok when `success === true` (a missing `error_code` is normal on V3 successes); code =
 * `error_code ?? code ?? errorCode` (the export uses all three); text = `error_msg ?? msg
 * ?? errorMsg`. Without `success`: the worksheet-list schema omits it (ok when `data` is
 * there and no failure code is), V1 answers `{code: 1, data}`, and the region helper
 * `{data, state: 1}` [C].
 */
export function readEnvelopeStatus(env: Envelope): EnvelopeStatus {
  const code = numberOf(env.error_code ?? env.code ?? env.errorCode);
  const text = env.error_msg ?? env.msg ?? env.errorMsg;
  const message = typeof text === 'string' ? text : '';
  if (env.success === true) return { ok: true, code, message };
  if (env.success === false) return { ok: false, code, message };
  if (code !== undefined) return { ok: code === 1, code, message };
  if (env.state !== undefined) return { ok: numberOf(env.state) === 1, code, message };
  return { ok: 'data' in env, code, message };
}

/**
 * Reads the platform envelope (platform-shapes §2) and returns `data`, or throws an
 * ApiError with the code's category. Business failures come as HTTP 200; non-2xx
 * answers and non-JSON bodies become ApiErrors too.
 */
export function readEnvelope<T>(res: RawResponse, ref: RequestRef & { isWrite: boolean }): T {
  const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
  const base = { method: ref.method, path: ref.path, httpStatus: res.status };
  const withRetry = retryAfterMs === undefined ? base : { ...base, retryAfterMs };

  if (res.json && isEnvelope(res.body)) {
    const { ok, code, message } = readEnvelopeStatus(res.body);
    if (ok && res.status >= 200 && res.status < 300) return res.body.data as T;
    // A success code beside `success: false` says nothing about what went wrong.
    if (code !== undefined && code !== 1 && code !== 0) {
      const meaning = PLATFORM_ERROR_CODES[code]?.meaning ?? 'unknown error code';
      return throwError(`platform error ${code} (${meaning})${message ? `: ${clip(message)}` : ''}`, {
        ...withRetry,
        category: categoryOfCode(code),
        errorCode: code,
      });
    }
    if (res.status < 200 || res.status >= 300) {
      return throwError(`HTTP ${res.status}${message ? `: ${clip(message)}` : ''}`, {
        ...withRetry,
        category: httpCategory(res.status, ref.isWrite),
      });
    }
    const codeText = code === undefined ? '' : ` (error_code ${code})`;
    return throwError(`platform reported failure${codeText}${message ? `: ${clip(message)}` : ''}`, {
      ...withRetry,
      category: 'unknown',
      ...(code === undefined ? {} : { errorCode: code }),
    });
  }

  if (res.status < 200 || res.status >= 300) {
    return throwError(`HTTP ${res.status}`, {
      ...withRetry,
      category: httpCategory(res.status, ref.isWrite),
    });
  }
  // A 2xx that is not the envelope (a proxy's page, a truncated body): for a write we
  // cannot tell whether it was applied.
  return throwError(res.json ? 'answer is not the API envelope' : 'answer is not JSON', {
    ...withRetry,
    category: ref.isWrite ? 'ambiguous' : 'transient',
  });
}

function throwError(
  message: string,
  init: RequestRef & {
    category: ErrorCategory;
    httpStatus: number;
    errorCode?: number;
    retryAfterMs?: number;
  },
): never {
  throw new ApiError(`${init.method} ${init.path}: ${message}`, init);
}
