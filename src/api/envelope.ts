import { ApiError, PLATFORM_ERROR_CODES, categoryOfCode } from './errors.ts';
import type { ErrorCategory, RequestRef } from './errors.ts';
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

function isEnvelope(body: unknown): body is Envelope {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  return 'success' in body || 'error_code' in body || 'code' in body;
}

/**
 * Reads the platform envelope (spec §2, platform notes §1) and returns `data`, or
 * throws an ApiError with the code's category. Success is `error_code === 1`, or
 * `success === true` with code 0 (published examples do that). Business failures come
 * as HTTP 200; non-2xx answers and non-JSON bodies become ApiErrors too.
 */
export function readEnvelope<T>(res: RawResponse, ref: RequestRef & { isWrite: boolean }): T {
  const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
  const base = { method: ref.method, path: ref.path, httpStatus: res.status };
  const withRetry = retryAfterMs === undefined ? base : { ...base, retryAfterMs };

  if (res.json && isEnvelope(res.body)) {
    const env = res.body;
    const code = env.error_code ?? env.code;
    const message = env.error_msg ?? env.msg ?? '';
    const ok = code === 1 || (env.success === true && (code === 0 || code === undefined));
    if (ok && res.status >= 200 && res.status < 300) return env.data as T;
    if (typeof code === 'number' && code !== 1 && code !== 0) {
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
    const codeText = typeof code === 'number' ? ` (error_code ${code})` : '';
    return throwError(`platform reported failure${codeText}${message ? `: ${clip(message)}` : ''}`, {
      ...withRetry,
      category: 'unknown',
      ...(typeof code === 'number' ? { errorCode: code } : {}),
    });
  }

  if (res.status < 200 || res.status >= 300) {
    return throwError(`HTTP ${res.status}`, { ...withRetry, category: httpCategory(res.status, ref.isWrite) });
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
  init: RequestRef & { category: ErrorCategory; httpStatus: number; errorCode?: number; retryAfterMs?: number },
): never {
  throw new ApiError(`${init.method} ${init.path}: ${message}`, init);
}
