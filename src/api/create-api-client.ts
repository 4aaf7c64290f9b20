import pRetry from 'p-retry';
import type { Dispatcher } from 'undici';
import { createAuth } from './auth.ts';
import type { Auth, Credentials } from './auth.ts';
import type { OAuthTokenStore } from './oauth-token-store.ts';
import { readEnvelope } from './envelope.ts';
import { ApiError, CATEGORY_POLICY } from '../ground/errors.ts';
import type { ErrorCategory } from '../ground/errors.ts';
import { createRateLimiter } from './limiter/create-rate-limiter.ts';
import { createServerClock } from './server-clock.ts';
import type { RateLimiter } from './limiter/create-rate-limiter.ts';
import { createTransport } from './transport.ts';
import type { Transport, TransportOptions } from './transport.ts';
import type { HttpMethod } from './types.ts';
import type { Logger } from '../ground/logger.ts';

/** One request of an endpoint, as the resource modules describe it. */
export interface ApiOperation {
  method: HttpMethod;
  /** Path from `/v3/`, ids already encoded. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /**
   * Whether the operation changes data. POST is also used for queries (rows/list,
   * pivot): those are reads and may be retried after a lost connection; a write whose
   * connection is lost after sending is `ambiguous` and is never retried blindly.
   */
  write: boolean;
  signal?: AbortSignal;
}

/** Sends one operation through auth, the rate limiter and the retry policy; resolves to `data`. */
export type CallFn = <T>(op: ApiOperation) => Promise<T>;

/** Retry settings (per category policy in errors.ts). */
export interface RetryOptions {
  /** Attempts after the first for `backoff` categories. @defaultValue 6 */
  retries?: number;
  /** Overall budget for one operation, throttled waits included. @defaultValue 300_000 */
  maxRetryTimeMs?: number;
  /** Full-jitter backoff: delay = random(0, min(maxDelayMs, baseDelayMs * 2^n)). @defaultValue 200 */
  baseDelayMs?: number;
  /** @defaultValue 20_000 */
  maxDelayMs?: number;
  /** Attempts for errors of unknown category (a code this client does not know). @defaultValue 2 */
  unknownRetries?: number;
}

export interface ClientEvent {
  /** `request`: one HTTP exchange; `retry`: a retry is scheduled; `refresh`: token refreshed. */
  type: 'request' | 'retry' | 'refresh';
  method: string;
  path: string;
  category?: ErrorCategory;
  errorCode?: number;
  durationMs?: number;
}

export interface ApiClientOptions extends Omit<TransportOptions, 'dispatcher'> {
  credentials: Credentials;
  /** Authentication header prefix (platform-shapes §1 [C]). @defaultValue 'HAP-' */
  headerPrefix?: string;
  dispatcher?: Dispatcher;
  /** OAuth: tokens shared with the other processes of the credential (see oauth-token-store.ts). */
  tokenStore?: OAuthTokenStore;
  /** A shared rate limiter; by default an in-process one keyed by the credential. */
  limiter?: RateLimiter;
  retry?: RetryOptions;
  logger?: Logger;
  /** Observes every exchange, retry and refresh (metrics, run reports). */
  onEvent?: (event: ClientEvent) => void;
}

export interface ClientStats {
  requests: number;
  throttled: number;
  retries: number;
  errorsByCategory: Partial<Record<ErrorCategory, number>>;
}

export interface ApiClient {
  call: CallFn;
  readonly auth: Auth;
  readonly limiter: RateLimiter;
  readonly transport: Transport;
  readonly stats: Readonly<ClientStats>;
  /**
   * The platform's time now (epoch ms) as the `Date` of its latest answer tells it, or
   * undefined while none carried one (server-clock.ts): the clock its `_updatedAt` are on.
   */
  serverTime(): number | undefined;
  close(): Promise<void>;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** Budget key of a credential: a hash of its identity, never the secret itself. */
export function budgetKeyFor(auth: Auth): string {
  return `rowbridge:budget:${auth.identity}`;
}

/**
 * The platform client core: every request goes through the rate limiter, carries
 * fresh credentials, is read through the envelope, and is retried per category.
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const transport = createTransport(options);
  const auth = createAuth(options.credentials, transport, {
    ...(options.headerPrefix === undefined ? {} : { headerPrefix: options.headerPrefix }),
    ...(options.tokenStore === undefined ? {} : { tokenStore: options.tokenStore }),
  });
  const ownsLimiter = options.limiter === undefined;
  const limiter = options.limiter ?? createRateLimiter({ budgetKey: budgetKeyFor(auth) });
  const retries = options.retry?.retries ?? 6;
  const maxRetryTime = options.retry?.maxRetryTimeMs ?? 300_000;
  const baseDelay = options.retry?.baseDelayMs ?? 200;
  const maxDelay = options.retry?.maxDelayMs ?? 20_000;
  const unknownRetries = options.retry?.unknownRetries ?? 2;
  const stats: ClientStats = { requests: 0, throttled: 0, retries: 0, errorsByCategory: {} };
  const log = options.logger;
  const emit = options.onEvent ?? (() => undefined);
  const serverClock = createServerClock();

  async function exchange<T>(op: ApiOperation): Promise<T> {
    const { headers, generation } = await auth.headers();
    const started = performance.now();
    stats.requests += 1;
    const ref = { method: op.method, path: op.path, isWrite: op.write };
    try {
      const res = await transport.send({
        ...ref,
        headers,
        query: op.query,
        body: op.body,
        signal: op.signal,
      });
      // An envelope is the platform's answer (a gateway's error page is not): its clock.
      if (res.json) serverClock.see(res.headers.date);
      const data = readEnvelope<T>(res, ref);
      limiter.onSuccess();
      emit({ type: 'request', method: op.method, path: op.path, durationMs: performance.now() - started });
      return data;
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      stats.errorsByCategory[err.category] = (stats.errorsByCategory[err.category] ?? 0) + 1;
      emit({
        type: 'request',
        method: op.method,
        path: op.path,
        category: err.category,
        ...(err.errorCode === undefined ? {} : { errorCode: err.errorCode }),
        durationMs: performance.now() - started,
      });
      if (err.category === 'throttled') {
        stats.throttled += 1;
        await limiter.onThrottled({
          code: err.errorCode ?? err.httpStatus ?? 0,
          ...(err.retryAfterMs === undefined ? {} : { retryAfterMs: err.retryAfterMs }),
        });
      } else if (err.category === 'auth-refresh') {
        if (await auth.refresh(generation)) emit({ type: 'refresh', method: op.method, path: op.path });
        else
          throw new ApiError(`${err.message} (this credential cannot be refreshed: renew it)`, {
            method: err.method,
            path: err.path,
            category: 'auth',
            ...(err.errorCode === undefined ? {} : { errorCode: err.errorCode }),
          });
      }
      throw err;
    }
  }

  function retryable(err: unknown, attemptNumber: number): boolean {
    if (!(err instanceof ApiError)) return false;
    const policy = CATEGORY_POLICY[err.category].retry;
    if (err.category === 'unknown') return attemptNumber <= unknownRetries;
    return policy === 'backoff' || policy === 'pace' || policy === 'refresh';
  }

  const call: CallFn = <T>(op: ApiOperation) =>
    pRetry(() => limiter.schedule(() => exchange<T>(op)), {
      retries,
      maxRetryTime,
      minTimeout: 1,
      factor: 1,
      ...(op.signal === undefined ? {} : { signal: op.signal }),
      // Throttled answers are paced by the shared limiter (it already waits), and a
      // token refresh is not the operation failing: neither is charged an attempt.
      shouldConsumeRetry: ({ error }) =>
        !(error instanceof ApiError && (error.category === 'throttled' || error.category === 'auth-refresh')),
      shouldRetry: ({ error, attemptNumber }) => retryable(error, attemptNumber),
      onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
        if (!retryable(error, attemptNumber) || retriesLeft === 0) return;
        stats.retries += 1;
        const apiError = error as ApiError;
        emit({ type: 'retry', method: op.method, path: op.path, category: apiError.category });
        log?.debug({ op: `${op.method} ${op.path}`, category: apiError.category, attemptNumber }, 'retrying');
        if (CATEGORY_POLICY[apiError.category].retry === 'backoff') {
          const cap = Math.min(maxDelay, baseDelay * 2 ** (attemptNumber - 1));
          await sleep(Math.random() * cap, op.signal);
        }
      },
    });

  return {
    call,
    auth,
    limiter,
    transport,
    stats,
    serverTime: () => serverClock.now(),
    async close() {
      if (ownsLimiter) await limiter.stop();
      await transport.close();
    },
  };
}
