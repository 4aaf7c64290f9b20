/**
 * One request of the http source, up to its response headers, retried on transient
 * failures (5xx, 429, 408, dropped or refused connections, connect and header timeouts)
 * with exponential backoff; a `Retry-After` header is honoured up to the delay cap. The
 * body is handed back unread, for the caller to stream. Messages name the method and the
 * URL without user info and with its credential query parameters masked, mask every
 * secret the caller lists, and name the setting and limit of a timeout or size cap that
 * was hit.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pRetry, { AbortError } from 'p-retry';
import { request, type Dispatcher } from 'undici';
import { RowbridgeError } from '../../ground/errors.ts';
import type { ErrorCategory } from '../../ground/errors.ts';
import type { HttpRetryOptions } from './source-deps.ts';
import type { HttpLimits } from './http-limits.ts';
import { redactSecrets, safeUrl } from './redact.ts';
import { SourceError } from './source-error.ts';
import { PRIVATE_ADDRESS_CODE } from './private-address-guard.ts';
import type { SourceGate } from './source-rate-limit.ts';

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
  /** Carries the connect timeout (an undici Agent made per read). */
  dispatcher: Dispatcher;
  limits: HttpLimits;
  /** The job's `source.rateLimit`: every attempt, retries included, takes its turn. */
  gate?: SourceGate | undefined;
}

/** A 2xx response whose body is not read yet. */
export interface OpenResponse {
  body: Dispatcher.ResponseData['body'];
  contentType: string;
  /** `GET https://host/path (page 2)`, secrets masked: the prefix of every message. */
  where: string;
  /** Gives back the rate-limit slot the request holds; call once the body is read or dropped. */
  release: () => void;
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
class AttemptError extends RowbridgeError {
  override name = 'AttemptError';
  override readonly code: string = 'ROWBRIDGE_SOURCE_ATTEMPT';
  /** `transient` when another attempt may succeed; `config` for an answer it will not change. */
  override readonly category: ErrorCategory;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(
    message: string,
    status: number | undefined,
    retryAfterMs: number | undefined,
    retryable: boolean,
  ) {
    super(message);
    this.category = retryable ? 'transient' : 'config';
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

/** The network error code of a thrown value (undici wraps some in `cause`). */
export function networkErrorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  const causeCode = (err as { cause?: { code?: unknown } } | null)?.cause?.code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
  return typeof causeCode === 'string' ? causeCode : typeof code === 'string' ? code : undefined;
}

/** What a failure code means to a user, naming the job-spec setting of a timeout. */
export function explainNetworkCode(code: string, limits: HttpLimits): string {
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `no connection within ${limits.connectTimeoutMs} ms (source.connectTimeoutMs)`;
    case 'UND_ERR_HEADERS_TIMEOUT':
      return `no response headers within ${limits.headersTimeoutMs} ms (source.headersTimeoutMs)`;
    case 'UND_ERR_BODY_TIMEOUT':
      return `the response body stalled for ${limits.bodyTimeoutMs} ms (source.bodyTimeoutMs)`;
    default:
      return code;
  }
}

/** The refusal of a response past `maxResponseBytes`. */
export function tooLarge(where: string, limits: HttpLimits, what: string): SourceError {
  return new SourceError(
    'SOURCE_CONFIG',
    `${where}: the response ${what} is larger than source.maxResponseBytes (${limits.maxResponseBytes} bytes); page the API (source.pagination) or raise maxResponseBytes`,
  );
}

/**
 * Drops a response body and its connection. undici's body reports its own destruction as
 * an 'error' event; with nothing listening that would crash the process.
 */
export function discardBody(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  if (!body.destroyed) body.destroy();
}

/** Sends the request (with retries) and returns the 2xx response with its body unread. */
export async function openResponse(req: JsonRequest): Promise<OpenResponse> {
  // Messages show the URL through safeUrl (credential parameters masked). The raw query
  // string (and so the whole URL) is masked wherever a driver echoes it; a URL without one
  // is exactly what messages show, so masking it would hide the host they must name.
  const secrets = [...req.secrets, ...(req.url.search === '' ? [] : [req.url.href, req.url.search])];
  // An env reference may sit in the path (`/v1/${TOKEN}/items`): mask it there too.
  const where = redactSecrets(`${req.method} ${safeUrl(req.url.href)} (${req.label})`, req.secrets);
  const attempt = async (): Promise<OpenResponse> => {
    const release = (await req.gate?.take()) ?? (() => undefined);
    try {
      return await send(release);
    } catch (err) {
      release();
      throw err;
    }
  };
  const send = async (release: () => void): Promise<OpenResponse> => {
    let response;
    try {
      response = await request(req.url, {
        dispatcher: req.dispatcher,
        method: req.method,
        headers:
          req.body === undefined ? req.headers : { 'content-type': 'application/json', ...req.headers },
        ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
        ...(req.signal === undefined ? {} : { signal: req.signal }),
        headersTimeout: req.limits.headersTimeoutMs,
        bodyTimeout: req.limits.bodyTimeoutMs,
      });
    } catch (err) {
      if (req.signal?.aborted === true) throw new AbortError(err as Error);
      const code = networkErrorCode(err) ?? 'network error';
      if (code === PRIVATE_ADDRESS_CODE) {
        throw new AbortError(
          new SourceError(
            'SOURCE_CONFIG',
            redactSecrets(
              `${where} refused: the host is or resolves to a loopback, private or link-local address, which ROWBRIDGE_SOURCE_DENY_PRIVATE forbids`,
              secrets,
            ),
          ),
        );
      }
      // Only the error code is kept, not the error: a driver message may quote the request.
      const message = redactSecrets(`${where} failed: ${explainNetworkCode(code, req.limits)}`, secrets);
      if (!NETWORK_CODES.has(code))
        throw new AbortError(new AttemptError(message, undefined, undefined, false));
      throw new AttemptError(message, undefined, undefined, true);
    }
    const { statusCode, headers, body } = response;
    if (statusCode < 200 || statusCode >= 300) {
      // The body is dropped unread: an error page may echo the request, credentials included.
      discardBody(body);
      const failure = new AttemptError(
        `${where} answered HTTP ${statusCode}`,
        statusCode,
        parseRetryAfter(headers['retry-after']),
        RETRY_STATUS.has(statusCode),
      );
      if (!RETRY_STATUS.has(statusCode)) throw new AbortError(failure);
      throw failure;
    }
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > req.limits.maxResponseBytes) {
      discardBody(body);
      throw new AbortError(tooLarge(where, req.limits, `(content-length ${declared})`));
    }
    return { body, contentType: String(headers['content-type'] ?? 'no content-type'), where, release };
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
    req.signal?.throwIfAborted();
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
