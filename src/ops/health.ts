/**
 * `/healthz` and `/readyz` (issue #5, point 3). Health: Redis answers PING and the
 * platform answers an authenticated `GET /v3/users/me`, each within a timeout. The
 * platform check is an authenticated request anyone who reaches `/healthz` can cause, so
 * (issue 22, item 5) its answer is reused for 10 s and it takes its turn in the
 * credential's shared budget like any other request. Readiness:
 * a flag the worker raises once its workers run and lowers when shutdown begins, so a
 * load balancer or orchestrator stops sending work before the process goes away.
 */
import { secretVariables } from '../../config/settings.ts';
import { credentialsFromEnv } from '../api/credentials-from-env.ts';
import { readEnvelope } from '../api/envelope.ts';
import { ApiError, PLATFORM_ERROR_CODES, RowbridgeError, classifyError } from '../ground/errors.ts';
import type { ErrorCategory } from '../ground/errors.ts';
import { createTransport, resolveBaseUrl } from '../api/transport.ts';
import type { Transport } from '../api/transport.ts';
import type { RateLimiter } from '../api/limiter/create-rate-limiter.ts';
import { redisAddress } from '../ground/redis-address.ts';
import type { Redis } from 'ioredis';
import type { Settings } from '../../config/settings.ts';
import type { ClientFor } from '../queue/runtime-types.ts';

/** `starting` until the workers run, `ready`, then `stopping` once shutdown began (never back). */
export type ReadinessState = 'starting' | 'ready' | 'stopping';

/** The readiness flag behind `/readyz`. */
export interface Readiness {
  readonly state: ReadinessState;
  /** The workers are started: `/readyz` answers 200. Ignored once stopping. */
  markReady(): void;
  /** Shutdown began: `/readyz` answers 503 from now on. */
  markStopping(): void;
}

export function createReadiness(): Readiness {
  let state: ReadinessState = 'starting';
  return {
    get state() {
      return state;
    },
    markReady() {
      if (state === 'starting') state = 'ready';
    },
    markStopping() {
      state = 'stopping';
    },
  };
}

/** One dependency's health. Messages are scrubbed of every configured secret. */
export interface ComponentHealth {
  status: 'reachable' | 'unreachable';
  /** Where it was looked for: `host:port` of Redis, the origin of the API. */
  target: string;
  latencyMs?: number;
  /** Error category (`transient`, `auth`, `config`, `timeout`...). */
  category?: string;
  errorCode?: number;
  message?: string;
  /** The API answered "throttled": reachable, just busy. */
  throttled?: boolean;
}

/** The body of `/healthz`: 200 when `status` is `ok`, else 503. */
export interface HealthReport {
  status: 'ok' | 'failing';
  redis: ComponentHealth;
  api: ComponentHealth;
}

export interface HealthCheck {
  /** Checks both; concurrent callers share the check in flight. */
  check(): Promise<HealthReport>;
  close(): Promise<void>;
}

/** What the check reads from the runtime. */
export interface HealthSource {
  /** State connection: answered PING. */
  redis: Redis;
  settings: Pick<Settings, 'redisUrl' | 'apiUrl'>;
  env: NodeJS.ProcessEnv;
  /** The client of the default credential: its limiter and auth for the probe. */
  clientFor: ClientFor;
}

/** Options of {@link createHealthCheck}. */
export interface HealthOptions {
  /** Longest wait for each of Redis and the API (the API's includes its turn in the budget). @defaultValue 3000 */
  timeoutMs?: number;
  /** How long an answer of the platform check is reused, whatever it was. @defaultValue 10000 */
  apiCacheMs?: number;
}

const PROBE_PATH = '/v3/users/me';

/** A probe got no answer in time: the next probe may. */
class ProbeTimeout extends RowbridgeError {
  override name = 'ProbeTimeout';
  override readonly code: string = 'ROWBRIDGE_PROBE_TIMEOUT';
  override readonly category: ErrorCategory = 'transient';
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProbeTimeout(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Every secret value the process was configured with, to be cut out of any message. */
function configuredSecrets(rt: HealthSource): string[] {
  const values = secretVariables().map((name) => rt.env[name]);
  try {
    values.push(decodeURIComponent(new URL(rt.settings.redisUrl).password));
  } catch {
    // Not a URL: the Redis client already refused it; nothing to scrub.
  }
  return values.filter((v): v is string => v !== undefined && v.trim().length >= 4).map((v) => v.trim());
}

export function createHealthCheck(rt: HealthSource, options: HealthOptions = {}): HealthCheck {
  const timeoutMs = options.timeoutMs ?? 3000;
  const apiCacheMs = options.apiCacheMs ?? 10_000;
  const secrets = configuredSecrets(rt);
  const scrub = (text: string) => secrets.reduce((out, secret) => out.split(secret).join('[redacted]'), text);
  let transport: Transport | undefined;
  let inFlight: Promise<HealthReport> | undefined;
  let apiAnswer: { at: number; health: ComponentHealth } | undefined;
  /** A probe still queued in the budget after its check gave up: the next check does not queue another. */
  let queued: Promise<unknown> | undefined;

  function failure(err: unknown, target: string): ComponentHealth {
    if (err instanceof ProbeTimeout || (err instanceof Error && err.name === 'TimeoutError')) {
      return {
        status: 'unreachable',
        target,
        category: 'timeout',
        message: `no answer within ${timeoutMs} ms`,
      };
    }
    const out: ComponentHealth = { status: 'unreachable', target, category: classifyError(err) };
    if (err instanceof ApiError && err.errorCode !== undefined) {
      out.errorCode = err.errorCode;
      const known = PLATFORM_ERROR_CODES[err.errorCode];
      if (known !== undefined) out.message = known.meaning;
    }
    out.message ??= scrub(err instanceof Error ? err.message : String(err));
    return out;
  }

  async function checkRedis(): Promise<ComponentHealth> {
    const target = redisAddress(rt.settings.redisUrl);
    const started = performance.now();
    try {
      const answer = await withTimeout(rt.redis.ping(), timeoutMs);
      if (answer !== 'PONG')
        return {
          status: 'unreachable',
          target,
          category: 'unknown',
          message: 'PING was not answered with PONG',
        };
      return { status: 'reachable', target, latencyMs: Math.round(performance.now() - started) };
    } catch (err) {
      return failure(err, target);
    }
  }

  /** Reachable but paced: an orchestrator must not restart a worker for being throttled. */
  function paced(target: string): ComponentHealth {
    return {
      status: 'reachable',
      target,
      throttled: true,
      message: `no turn in the credential's request budget within ${timeoutMs} ms: requests are being paced`,
    };
  }

  async function probeApi(): Promise<ComponentHealth> {
    let target = 'the configured ROWBRIDGE_API_URL';
    const started = performance.now();
    let sent = false;
    let limiter: RateLimiter | undefined;
    try {
      const baseUrl = resolveBaseUrl({
        baseUrl: credentialsFromEnv(rt.env).apiUrl ?? rt.settings.apiUrl ?? '',
      });
      target = new URL(baseUrl).origin;
      if (queued !== undefined) return paced(target);
      // Through the limiter (one turn of the shared budget) but not the client's retries:
      // one answer is what a probe asks for.
      const client = rt.clientFor();
      const { auth } = client;
      limiter = client.limiter;
      const http = (transport ??= createTransport({
        baseUrl,
        connections: 1,
        connectTimeoutMs: timeoutMs,
        headersTimeoutMs: timeoutMs,
      }));
      const deadline = AbortSignal.timeout(timeoutMs);
      const turn = client.limiter.schedule(async () => {
        // A turn granted after the check gave up is not spent on a request nobody reads.
        if (deadline.aborted) return undefined;
        sent = true;
        const { headers } = await auth.headers();
        return http.send({ method: 'GET', path: PROBE_PATH, headers, isWrite: false, signal: deadline });
      });
      const res = await withTimeout(turn, timeoutMs).catch((err: unknown) => {
        if (!sent) {
          queued = turn
            .catch(() => undefined)
            .finally(() => {
              queued = undefined;
            });
        }
        throw err;
      });
      if (res === undefined) return paced(target);
      readEnvelope(res, { method: 'GET', path: PROBE_PATH, isWrite: false });
      return { status: 'reachable', target, latencyMs: Math.round(performance.now() - started) };
    } catch (err) {
      if (!sent && err instanceof ProbeTimeout) return paced(target);
      // The client refreshes expired tokens itself; a throttled answer pauses the budget
      // for every worker of the credential, as the client's own would.
      if (err instanceof ApiError && (err.category === 'throttled' || err.category === 'auth-refresh')) {
        if (err.category === 'throttled') {
          try {
            await limiter?.onThrottled({
              code: err.errorCode ?? err.httpStatus ?? 0,
              ...(err.retryAfterMs === undefined ? {} : { retryAfterMs: err.retryAfterMs }),
            });
          } catch {
            // The budget is in Redis, which the Redis half of the report covers.
          }
        }
        return {
          status: 'reachable',
          target,
          latencyMs: Math.round(performance.now() - started),
          throttled: err.category === 'throttled',
        };
      }
      return failure(err, target);
    }
  }

  async function checkApi(): Promise<ComponentHealth> {
    if (apiAnswer !== undefined && performance.now() - apiAnswer.at < apiCacheMs) return apiAnswer.health;
    const health = await probeApi();
    apiAnswer = { at: performance.now(), health };
    return health;
  }

  return {
    check() {
      inFlight ??= Promise.all([checkRedis(), checkApi()])
        .then(([redis, api]): HealthReport => ({
          status: redis.status === 'reachable' && api.status === 'reachable' ? 'ok' : 'failing',
          redis,
          api,
        }))
        .finally(() => {
          inFlight = undefined;
        });
      return inFlight;
    },
    async close() {
      await transport?.close();
      transport = undefined;
    },
  };
}
