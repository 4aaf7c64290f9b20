/**
 * One JSON request of the http source, retried on transient failures (5xx, 429, 408,
 * dropped or refused connections) with exponential backoff; a `Retry-After` header is
 * honoured up to the delay cap. Messages name the method and the URL without query
 * string or user info, and mask every secret the caller lists.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pRetry, { AbortError } from 'p-retry';
import { request } from 'undici';
import type { HttpRetryOptions } from './source-deps.ts';
import { redactSecrets, safeUrl } from './redact.ts';
import { SourceError } from './source-error.ts';

export interface JsonRequest {
  method: 'GET' | 'POST';
  url: URL;
  headers: Record<string, string>;
  body?: unknown;
  /** "page 3": where the request sits in the scan, for messages. */
  label: string;
  /** Values that must not appear in any message. */
  secrets: readonly string[];
  signal?: AbortSignal | undefined;
  retry?: HttpRetryOptions | undefined;
}

const RETRY_STATUS = new Set([408, 429, 500, 502, 503, 504]);
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** A failed attempt: the status (if any), whether to retry, and the server's wait hint. */
class AttemptError extends Error {
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, status: number | undefined, retryAfterMs: number | undefined) {
    super(message);
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }
}

function parseRetryAfter(header: string | string[] | undefined): number | undefined {
  const text = Array.isArray(header) ? header[0] : header;
  if (text === undefined) return undefined;
  const seconds = Number(text);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  const causeCode = (err as { cause?: { code?: unknown } } | null)?.cause?.code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
  return typeof causeCode === 'string' ? causeCode : typeof code === 'string' ? code : undefined;
}

/** Sends the request (with retries) and returns the parsed JSON body. */
export async function fetchJson(req: JsonRequest): Promise<unknown> {
  const secrets = [...req.secrets, req.url.href, req.url.search];
  // An env reference may sit in the path (`/v1/${TOKEN}/items`): mask it there too.
  const where = redactSecrets(`${req.method} ${safeUrl(req.url.href)} (${req.label})`, req.secrets);
  const attempt = async (): Promise<unknown> => {
    let response;
    try {
      response = await request(req.url, {
        method: req.method,
        headers:
          req.body === undefined ? req.headers : { 'content-type': 'application/json', ...req.headers },
        ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
        ...(req.signal === undefined ? {} : { signal: req.signal }),
      });
    } catch (err) {
      if (req.signal?.aborted === true) throw new AbortError(err as Error);
      const code = errorCode(err) ?? 'network error';
      // Only the error code is kept, not the error: a driver message may quote the request.
      const message = redactSecrets(`${where} failed: ${code}`, secrets);
      if (!NETWORK_CODES.has(code)) throw new AbortError(new AttemptError(message, undefined, undefined));
      throw new AttemptError(message, undefined, undefined);
    }
    const { statusCode, headers, body } = response;
    if (statusCode < 200 || statusCode >= 300) {
      // The body is dropped unread: an error page may echo the request, credentials included.
      await body.dump();
      const failure = new AttemptError(
        `${where} answered HTTP ${statusCode}`,
        statusCode,
        parseRetryAfter(headers['retry-after']),
      );
      if (!RETRY_STATUS.has(statusCode)) throw new AbortError(failure);
      throw failure;
    }
    const text = await body.text();
    try {
      return JSON.parse(text) as unknown;
    } catch {
      const type = String(headers['content-type'] ?? 'no content-type');
      throw new AbortError(new SourceError('SOURCE_FORMAT', `${where}: the response is not JSON (${type})`));
    }
  };
  const retries = req.retry?.retries ?? 3;
  const maxTimeout = req.retry?.maxTimeoutMs ?? 10_000;
  try {
    return await pRetry(attempt, {
      retries,
      factor: 2,
      minTimeout: req.retry?.minTimeoutMs ?? 500,
      maxTimeout,
      randomize: true,
      ...(req.signal === undefined ? {} : { signal: req.signal }),
      onFailedAttempt: async ({ error, retriesLeft }) => {
        const wait = error instanceof AttemptError ? error.retryAfterMs : undefined;
        // p-retry waits its own backoff next; a longer server hint adds the difference.
        if (wait !== undefined && retriesLeft > 0)
          await sleep(Math.min(wait, maxTimeout), undefined, { signal: req.signal });
      },
    });
  } catch (err) {
    if (err instanceof SourceError) throw err;
    if (err instanceof AttemptError) {
      const attempts =
        err.status !== undefined && !RETRY_STATUS.has(err.status) ? '' : ` after ${retries + 1} attempts`;
      throw new SourceError('SOURCE_UNAVAILABLE', `http source: ${err.message}${attempts}`, {
        cause: err,
        ...(err.status === undefined ? {} : { status: err.status }),
      });
    }
    throw err;
  }
}
