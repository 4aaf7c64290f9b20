import type { BudgetConfig } from './budget-transitions.ts';
import type { Redis } from 'ioredis';

/**
 * Options of {@link createRateLimiter}. Rates are for the whole budget, i.e. all
 * processes sharing `budgetKey`, not per process.
 *
 * The shared state expires after `idleTtlMs` without use; the rate it learned is kept
 * `learnedTtlMs` longer, and a new budget starts there rather than at `initialRatePerSec`.
 */
export interface RateLimiterOptions {
  /** Shared-budget key; the client derives it from a hash of the credential identity, never the secret. e.g. "rowbridge:budget:3f9a..." */
  budgetKey: string;
  /** ioredis client; when absent the budget is in-process only (single-process use, unit tests). */
  redis?: Redis;
  /** Rate of a new budget in requests/second. @defaultValue 10 */
  initialRatePerSec?: number;
  /** Ceiling of the rate. @defaultValue 50 */
  maxRatePerSec?: number;
  /** Floor of the rate. @defaultValue 0.5 */
  minRatePerSec?: number;
  /** Max in-flight requests in this process (calls past it wait, first come first served). @defaultValue 8 */
  maxConcurrent?: number;
  /**
   * Multiplicative decrease on a throttled answer, in (0, 1). When the budget was
   * throttled before, the rate goes instead to what the server delivered since then,
   * never lower than this factor allows. @defaultValue 0.7
   */
  decreaseFactor?: number;
  /** Additive increase (requests/second) per success window; smaller just above a measured limit. @defaultValue 1 */
  increasePerSec?: number;
  /** Length of a success window: at most one increase per window. @defaultValue 1000 */
  increaseIntervalMs?: number;
  /** Burst allowance: the bucket holds this many milliseconds of the rate (at least one request). @defaultValue 200 */
  burstMs?: number;
  /** Pause of the whole budget after code 51 or HTTP 429 without Retry-After. @defaultValue 1000 */
  backoff51Ms?: number;
  /** Pause of the whole budget after code 90000 (count over the limit, quota-like) without Retry-After. @defaultValue 60000 */
  backoff90000Ms?: number;
  /** A budget nobody touched for this long is deleted from Redis. @defaultValue 600000 */
  idleTtlMs?: number;
  /** The rate a shared budget learned is kept this long after it last changed. @defaultValue 3600000 */
  learnedTtlMs?: number;
  /** Receives failures of the background update behind onSuccess (the rate then just does not rise). */
  onError?: (err: Error) => void;
  /** Clock of the in-process budget, for tests; the Redis budget always uses Redis server time. @defaultValue Date.now */
  now?: () => number;
}

/** Everything the limiter needs once defaults are applied and values validated. */
export interface ResolvedLimiterSettings {
  budgetKey: string;
  budget: BudgetConfig;
  maxConcurrent: number;
  backoff51Ms: number;
  backoff90000Ms: number;
  idleTtlMs: number;
  learnedTtlMs: number;
}

/** The numeric settings as a caller may pass them (documented on RateLimiterOptions). */
export type LimiterSettingsInput = Omit<RateLimiterOptions, 'redis' | 'onError' | 'now'>;

/** Defaults in one place; the platform publishes no rate numbers [C], so these are guesses on the safe side. */
export const LIMITER_DEFAULTS = {
  initialRatePerSec: 10,
  maxRatePerSec: 50,
  minRatePerSec: 0.5,
  maxConcurrent: 8,
  decreaseFactor: 0.7,
  increasePerSec: 1,
  increaseIntervalMs: 1000,
  burstMs: 200,
  backoff51Ms: 1000,
  backoff90000Ms: 60_000,
  idleTtlMs: 10 * 60_000,
  learnedTtlMs: 60 * 60_000,
} as const;

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new RangeError(`rate limiter option ${name} must be a finite number > 0, got ${String(value)}`);
  }
  return value;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`rate limiter option ${name} must be a finite number >= 0, got ${String(value)}`);
  }
  return value;
}

/** Applies defaults and validates; messages name the option and the allowed range. */
export function resolveLimiterSettings(input: LimiterSettingsInput): ResolvedLimiterSettings {
  if (typeof input.budgetKey !== 'string' || input.budgetKey.trim() === '') {
    throw new TypeError(
      'rate limiter option budgetKey must be a non-empty string (e.g. "rowbridge:budget:<hash>")',
    );
  }
  const d = LIMITER_DEFAULTS;
  const maxRate = positive('maxRatePerSec', input.maxRatePerSec ?? d.maxRatePerSec);
  const minRate = positive('minRatePerSec', input.minRatePerSec ?? Math.min(d.minRatePerSec, maxRate));
  const initialRate = positive(
    'initialRatePerSec',
    input.initialRatePerSec ?? Math.min(d.initialRatePerSec, maxRate),
  );
  if (minRate > maxRate) {
    throw new RangeError(
      `rate limiter option minRatePerSec (${minRate}) must be <= maxRatePerSec (${maxRate})`,
    );
  }
  if (initialRate < minRate || initialRate > maxRate) {
    throw new RangeError(
      `rate limiter option initialRatePerSec (${initialRate}) must lie between minRatePerSec (${minRate}) and maxRatePerSec (${maxRate})`,
    );
  }
  const decreaseFactor = input.decreaseFactor ?? d.decreaseFactor;
  if (!Number.isFinite(decreaseFactor) || decreaseFactor <= 0 || decreaseFactor >= 1) {
    throw new RangeError(
      `rate limiter option decreaseFactor must be a number in (0, 1), got ${String(decreaseFactor)}`,
    );
  }
  const maxConcurrent = input.maxConcurrent ?? d.maxConcurrent;
  if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) {
    throw new RangeError(
      `rate limiter option maxConcurrent must be an integer >= 1, got ${String(maxConcurrent)}`,
    );
  }
  return {
    budgetKey: input.budgetKey,
    budget: {
      initialRate,
      minRate,
      maxRate,
      decreaseFactor,
      increasePerSec: nonNegative('increasePerSec', input.increasePerSec ?? d.increasePerSec),
      increaseIntervalMs: nonNegative('increaseIntervalMs', input.increaseIntervalMs ?? d.increaseIntervalMs),
      burstMs: nonNegative('burstMs', input.burstMs ?? d.burstMs),
    },
    maxConcurrent,
    backoff51Ms: nonNegative('backoff51Ms', input.backoff51Ms ?? d.backoff51Ms),
    backoff90000Ms: nonNegative('backoff90000Ms', input.backoff90000Ms ?? d.backoff90000Ms),
    idleTtlMs: positive('idleTtlMs', input.idleTtlMs ?? d.idleTtlMs),
    learnedTtlMs: positive('learnedTtlMs', input.learnedTtlMs ?? d.learnedTtlMs),
  };
}
