/**
 * The shared request budget as pure state transitions: a token bucket whose refill rate
 * is steered by AIMD (additive increase, multiplicative decrease).
 *
 * This module is the single definition of the algorithm. The in-memory budget runs it
 * directly; the Redis budget (`budget-script.ts`) is a line-by-line Lua mirror of it so
 * that every process sharing a credential applies exactly the same rules, atomically.
 * Change both together; `test/integration/limiter-redis-script.test.ts` replays the
 * same sequence through both and fails on any difference.
 */

/** Tuning of one budget. All rates are requests per second for the whole budget. */
export interface BudgetConfig {
  /** Rate of a budget that does not exist yet (first use, or after it expired). */
  initialRate: number;
  /** Floor for multiplicative decrease. */
  minRate: number;
  /** Ceiling for additive increase. */
  maxRate: number;
  /** Factor applied to the rate on a throttled answer, in (0, 1). */
  decreaseFactor: number;
  /** Requests/second added per increase step. */
  increasePerSec: number;
  /** Minimum time between two increase steps. */
  increaseIntervalMs: number;
  /** Bucket depth in milliseconds of the current rate (burst allowance), never below one token. */
  burstMs: number;
}

/** State of one budget. Times are milliseconds on a single clock (Redis server time when shared). */
export interface BudgetState {
  /** Tokens available now; one request takes one token. */
  tokens: number;
  /** Time up to which tokens have been credited; may lie in the future during a pause. */
  lastRefillMs: number;
  /** Current refill rate in requests/second. */
  rate: number;
  /** No token is handed out before this time. */
  pausedUntilMs: number;
  /** Time of the last increase step (or the end of the last pause). */
  lastIncreaseMs: number;
  /** Last time a caller had to wait for a token, i.e. the rate was the binding limit. */
  lastWaitMs: number;
}

/** Outcome of an acquisition attempt. */
export interface AcquireResult {
  state: BudgetState;
  /** 0 when a token was taken; otherwise how long to wait before asking again. */
  waitMs: number;
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}

function capacity(rate: number, config: BudgetConfig): number {
  return Math.max(1, (rate * config.burstMs) / 1000);
}

function initial(config: BudgetConfig, nowMs: number): BudgetState {
  const rate = clamp(config.initialRate, config.minRate, config.maxRate);
  // A fresh budget starts with a single token, not a full bucket: the previous run may
  // have ended seconds ago against the same short-window server limit.
  return { tokens: 1, lastRefillMs: nowMs, rate, pausedUntilMs: 0, lastIncreaseMs: nowMs, lastWaitMs: 0 };
}

function refill(state: BudgetState, config: BudgetConfig, nowMs: number): BudgetState {
  // Processes may run with different min/max settings; the caller's bounds win.
  const rate = clamp(state.rate, config.minRate, config.maxRate);
  const elapsedMs = Math.max(0, nowMs - state.lastRefillMs);
  const tokens = Math.min(capacity(rate, config), state.tokens + (elapsedMs * rate) / 1000);
  return { ...state, rate, tokens, lastRefillMs: Math.max(state.lastRefillMs, nowMs) };
}

function acquire(state: BudgetState, config: BudgetConfig, nowMs: number): AcquireResult {
  if (nowMs < state.pausedUntilMs) {
    return { state, waitMs: state.pausedUntilMs - nowMs };
  }
  const next = refill(state, config, nowMs);
  if (next.tokens >= 1) {
    return { state: { ...next, tokens: next.tokens - 1 }, waitMs: 0 };
  }
  return {
    state: { ...next, lastWaitMs: nowMs },
    waitMs: ((1 - next.tokens) * 1000) / next.rate,
  };
}

function throttled(state: BudgetState, config: BudgetConfig, nowMs: number, pauseMs: number): BudgetState {
  const next = refill(state, config, nowMs);
  const pausedUntilMs = Math.max(next.pausedUntilMs, nowMs + pauseMs);
  // Requests already in flight when the first throttled answer arrived come back
  // throttled too; they describe the same overload, so the rate drops once per pause.
  const rate =
    nowMs < next.pausedUntilMs ? next.rate : Math.max(config.minRate, next.rate * config.decreaseFactor);
  return {
    ...next,
    rate,
    pausedUntilMs,
    // Empty bucket, credited from the end of the pause: traffic resumes at the new pace
    // instead of with a burst that would trip the short window again.
    tokens: 0,
    lastRefillMs: Math.max(next.lastRefillMs, pausedUntilMs),
    lastIncreaseMs: Math.max(next.lastIncreaseMs, pausedUntilMs),
  };
}

function success(state: BudgetState, config: BudgetConfig, nowMs: number): BudgetState {
  const next = refill(state, config, nowMs);
  const due = nowMs >= next.pausedUntilMs && nowMs - next.lastIncreaseMs >= config.increaseIntervalMs;
  // Probe upwards only while the budget is what holds callers back; a budget that is
  // never exhausted would otherwise drift to maxRate untested and hit the real limit
  // with a burst the day demand grows.
  const demandBound = next.lastWaitMs > next.lastIncreaseMs;
  if (!due || !demandBound || next.rate >= config.maxRate) {
    return next;
  }
  return {
    ...next,
    rate: Math.min(config.maxRate, next.rate + config.increasePerSec),
    lastIncreaseMs: nowMs,
  };
}

/** The budget's transitions; each takes the state and the current time and returns the next state. */
export const budgetTransitions = { initial, acquire, throttled, success, capacity } as const;
