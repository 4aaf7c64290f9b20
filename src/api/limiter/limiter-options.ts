import type { BudgetConfig } from './budget-transitions.ts';
import type { RateLimiterOptions } from './create-rate-limiter.ts';

/** Everything the limiter needs once defaults are applied and values validated. */
export interface ResolvedLimiterSettings {
  budgetKey: string;
  budget: BudgetConfig;
  maxConcurrent: number;
  backoff51Ms: number;
  backoff90000Ms: number;
  idleTtlMs: number;
}

/** The numeric settings as a caller may pass them (documented on RateLimiterOptions). */
export type LimiterSettingsInput = Omit<RateLimiterOptions, 'redis' | 'onError' | 'now'>;

/** Defaults in one place; the platform publishes no rate numbers [C], so these are guesses on the safe side. */
export const LIMITER_DEFAULTS = {
  initialRatePerSec: 10,
  maxRatePerSec: 50,
  minRatePerSec: 0.5,
  maxConcurrent: 8,
  decreaseFactor: 0.8,
  increasePerSec: 1,
  increaseIntervalMs: 1000,
  burstMs: 200,
  backoff51Ms: 1000,
  backoff90000Ms: 60_000,
  idleTtlMs: 10 * 60_000,
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
    throw new TypeError('rate limiter option budgetKey must be a non-empty string (e.g. "rowbridge:budget:<hash>")');
  }
  const d = LIMITER_DEFAULTS;
  const maxRate = positive('maxRatePerSec', input.maxRatePerSec ?? d.maxRatePerSec);
  const minRate = positive('minRatePerSec', input.minRatePerSec ?? Math.min(d.minRatePerSec, maxRate));
  const initialRate = positive('initialRatePerSec', input.initialRatePerSec ?? Math.min(d.initialRatePerSec, maxRate));
  if (minRate > maxRate) {
    throw new RangeError(`rate limiter option minRatePerSec (${minRate}) must be <= maxRatePerSec (${maxRate})`);
  }
  if (initialRate < minRate || initialRate > maxRate) {
    throw new RangeError(
      `rate limiter option initialRatePerSec (${initialRate}) must lie between minRatePerSec (${minRate}) and maxRatePerSec (${maxRate})`,
    );
  }
  const decreaseFactor = input.decreaseFactor ?? d.decreaseFactor;
  if (!Number.isFinite(decreaseFactor) || decreaseFactor <= 0 || decreaseFactor >= 1) {
    throw new RangeError(`rate limiter option decreaseFactor must be a number in (0, 1), got ${String(decreaseFactor)}`);
  }
  const maxConcurrent = input.maxConcurrent ?? d.maxConcurrent;
  if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) {
    throw new RangeError(`rate limiter option maxConcurrent must be an integer >= 1, got ${String(maxConcurrent)}`);
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
  };
}
