/**
 * The shared request budget as pure state transitions: a token bucket whose refill rate
 * is steered by AIMD (additive increase, multiplicative decrease), refined by what the
 * server's throttled answers reveal: between two of them the tokens handed out measure
 * the server's limit, so a throttled budget goes to that rate and probes above it slowly
 * at first (issue 12: plain AIMD's saw-tooth cost 2.3% of requests answered 51 and 4% of
 * the ceiling; see bench/README.md).
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
  /** Factor applied to the rate on a throttled answer, in (0, 1); with a measured window, the largest cut. */
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
  /**
   * Start of the measurement window: the last throttled answer that lowered the rate, or
   * 0 when no window is open (a fresh budget, or after a long, quota-like pause).
   */
  windowStartMs: number;
  /** Tokens handed out since windowStartMs. */
  windowGrants: number;
  /**
   * The rate a measured decrease settled on (0: none yet). At and above it the rate
   * probes upwards slowly at first (see {@link probeStep}); below it, additively.
   */
  probeBaseRate: number;
  /** When the slow probe above probeBaseRate started (the end of that pause). */
  probeFromMs: number;
  /** The rate just after the throttled answer that opened this window (a learned start: the learned rate). */
  windowStartRate: number;
  /** The highest rate held through a whole increase interval without a throttled answer, since the last one (0: none). */
  passedRate: number;
  /** What this budget would hand the next one as its learned rate (0: nothing learned yet); see {@link estimateAfterThrottle}. */
  estimate: number;
}

/** Outcome of an acquisition attempt. */
export interface AcquireResult {
  state: BudgetState;
  /** 0 when tokens were taken; otherwise how long to wait before asking again. */
  waitMs: number;
  /** Tokens taken: up to the count asked for, 0 when waitMs > 0. */
  granted: number;
}

/** A window shorter than this holds too few grants to measure a rate from. */
const MIN_WINDOW_MS = 1000;
/** Each measured decrease lowers the rate by at least this share. */
const MIN_CUT = 0.03;
/** A pause longer than this (a quota, a long Retry-After) closes the measurement window. */
const MAX_WINDOW_PAUSE_MS = 10_000;
/** Growth of the slow probe's step: this share of probeBaseRate per second, per second. */
const PROBE_GROWTH = 0.0001;

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}

function capacity(rate: number, config: BudgetConfig): number {
  return Math.max(1, (rate * config.burstMs) / 1000);
}

/**
 * What a budget of the same credential learned before (kept apart from the budget, which
 * expires when idle): its last rate and the rate its last measured decrease settled on.
 */
export interface LearnedRate {
  rate: number;
  probeBaseRate: number;
}

/**
 * A new budget. With a learned rate it starts there (within this process's bounds) and,
 * when that rate was measured, probes above it slowly: a run after an idle spell does
 * not climb from initialRate into the limit it already found (issue 24 §6). It also opens
 * a measurement window then, so a first throttled answer costs the small measured cut,
 * not decreaseFactor: the learned rate is near the limit, not a guess far above it, and
 * the server's bucket, full after the idle spell, makes the count lean high, never low.
 */
function initial(config: BudgetConfig, nowMs: number, learned?: LearnedRate): BudgetState {
  const fromLearned = learned !== undefined && learned.rate > 0;
  const rate = clamp(fromLearned ? learned.rate : config.initialRate, config.minRate, config.maxRate);
  const probeBaseRate = fromLearned ? Math.min(config.maxRate, Math.max(0, learned.probeBaseRate)) : 0;
  const measuredStart = probeBaseRate > 0;
  // A fresh budget starts with a single token, not a full bucket: the previous run may
  // have ended seconds ago against the same short-window server limit.
  return {
    tokens: 1,
    lastRefillMs: nowMs,
    rate,
    pausedUntilMs: 0,
    lastIncreaseMs: nowMs,
    lastWaitMs: 0,
    windowStartMs: measuredStart ? nowMs : 0,
    windowGrants: 0,
    probeBaseRate,
    probeFromMs: measuredStart ? nowMs : 0,
    windowStartRate: rate,
    passedRate: 0,
    estimate: fromLearned ? rate : 0,
  };
}

function refill(state: BudgetState, config: BudgetConfig, nowMs: number): BudgetState {
  // Processes may run with different min/max settings; the caller's bounds win.
  const rate = clamp(state.rate, config.minRate, config.maxRate);
  const elapsedMs = Math.max(0, nowMs - state.lastRefillMs);
  const tokens = Math.min(capacity(rate, config), state.tokens + (elapsedMs * rate) / 1000);
  return { ...state, rate, tokens, lastRefillMs: Math.max(state.lastRefillMs, nowMs) };
}

/**
 * Takes up to `count` whole tokens (as many as the bucket holds). Several at once let a
 * process with several callers waiting pay one Redis round trip for all of them; the
 * bucket is the same, so the budget's pace is too.
 */
function acquire(state: BudgetState, config: BudgetConfig, nowMs: number, count = 1): AcquireResult {
  if (nowMs < state.pausedUntilMs) {
    return { state, waitMs: state.pausedUntilMs - nowMs, granted: 0 };
  }
  const next = refill(state, config, nowMs);
  if (next.tokens >= 1) {
    const granted = Math.max(1, Math.min(Math.floor(count), Math.floor(next.tokens)));
    return {
      state: { ...next, tokens: next.tokens - granted, windowGrants: next.windowGrants + granted },
      waitMs: 0,
      granted,
    };
  }
  return {
    state: { ...next, lastWaitMs: nowMs },
    waitMs: ((1 - next.tokens) * 1000) / next.rate,
    granted: 0,
  };
}

/**
 * The rate after a throttled answer that is not part of a pause already under way.
 *
 * Between two such answers the server's short-window budget went from empty (the first
 * answer) to empty again (this one), so the tokens handed out over that window, pause
 * included, are what the server actually delivers per second: its limit, measured. The
 * rate goes there, never lower than one multiplicative step (`decreaseFactor`) and at
 * least MIN_CUT below where it was, so a window that was not demand-bound (measuring
 * less than the server allows) costs no more than the plain AIMD step, and repeated
 * throttling still converges downwards. Without such a window (the first throttled
 * answer of a budget: the server's bucket started full, so the count says nothing)
 * it is the plain multiplicative decrease.
 */
function decreasedRate(state: BudgetState, config: BudgetConfig, nowMs: number): number {
  const floor = Math.max(config.minRate, state.rate * config.decreaseFactor);
  const windowMs = nowMs - state.windowStartMs;
  if (state.windowStartMs <= 0 || windowMs < MIN_WINDOW_MS) return floor;
  const measured = (state.windowGrants * 1000) / windowMs;
  return Math.max(floor, Math.min(measured, state.rate * (1 - MIN_CUT)));
}

/**
 * The learned rate after a throttled answer that lowered the rate to `rate`, from the
 * window it closes. A measured window in which the budget stayed at or above the rate it
 * measured was bound by the server all along: that measure is the limit. One that began
 * below it (climbing back from a plain cut) also counted the server's idle capacity while
 * the budget's own rate held callers back, so it reads low, while the highest rate that
 * passed before the throttle reads high (it drained the server's burst): the estimate is
 * halfway. Stored low, the next run's slow probe would hold it there for its whole length
 * (issue 24 §6: 18.2 learned for a limit of 20). Unmeasured: the higher of the new rate
 * and the highest that passed.
 */
function estimateAfterThrottle(state: BudgetState, rate: number, measured: boolean): number {
  if (!measured) return Math.max(rate, state.passedRate);
  if (state.windowStartRate >= rate) return rate;
  return (rate + Math.max(rate, state.passedRate)) / 2;
}

function throttled(state: BudgetState, config: BudgetConfig, nowMs: number, pauseMs: number): BudgetState {
  const next = refill(state, config, nowMs);
  const pausedUntilMs = Math.max(next.pausedUntilMs, nowMs + pauseMs);
  // Requests already in flight when the first throttled answer arrived come back
  // throttled too; they describe the same overload, so the rate drops once per pause.
  const fresh = nowMs >= next.pausedUntilMs;
  const rate = fresh ? decreasedRate(next, config, nowMs) : next.rate;
  const measured = fresh && next.windowStartMs > 0 && nowMs - next.windowStartMs >= MIN_WINDOW_MS;
  // A long pause (quota, Retry-After) would dilute the next window with idle time.
  const openWindow = pausedUntilMs - nowMs <= MAX_WINDOW_PAUSE_MS;
  return {
    ...next,
    rate,
    pausedUntilMs,
    // One token, credited from the end of the pause: the pause was the wait for it, and
    // traffic resumes at the new pace instead of with a burst that would trip the short
    // window again. (An empty bucket here left the server's refilled window unused for
    // one more 1/rate after every pause, and skewed the next measured window low.)
    tokens: 1,
    lastRefillMs: Math.max(next.lastRefillMs, pausedUntilMs),
    lastIncreaseMs: Math.max(next.lastIncreaseMs, pausedUntilMs),
    ...(fresh ? { windowStartMs: openWindow ? nowMs : 0, windowGrants: 0 } : {}),
    ...(!openWindow ? { windowStartMs: 0, windowGrants: 0 } : {}),
    ...(measured ? { probeBaseRate: rate, probeFromMs: pausedUntilMs } : {}),
    ...(fresh
      ? { windowStartRate: rate, passedRate: 0, estimate: estimateAfterThrottle(next, rate, measured) }
      : {}),
  };
}

/**
 * Size of one increase step. Below the rate a measured decrease settled on (or with no
 * such rate) it is increasePerSec: far from the known limit, climb back fast. At and
 * above it the step starts near zero and grows with the time since that pause ended
 * (PROBE_GROWTH of probeBaseRate per second, per second), so the rate stays close to the
 * limit it measured for a while, then probes further and faster: the limit may have
 * moved. A throttled budget thus spends its time just under or at the server's limit
 * instead of in a saw-tooth above it.
 */
function probeStep(state: BudgetState, config: BudgetConfig, nowMs: number): number {
  if (state.probeBaseRate <= 0 || state.rate < state.probeBaseRate) return config.increasePerSec;
  const seconds = Math.max(0, nowMs - state.probeFromMs) / 1000;
  return Math.min(config.increasePerSec, state.probeBaseRate * PROBE_GROWTH * seconds);
}

function success(state: BudgetState, config: BudgetConfig, nowMs: number): BudgetState {
  const next = refill(state, config, nowMs);
  const due = nowMs >= next.pausedUntilMs && nowMs - next.lastIncreaseMs >= config.increaseIntervalMs;
  // Probe upwards only while the budget is what holds callers back; a budget that is
  // never exhausted would otherwise drift to maxRate untested and hit the real limit
  // with a burst the day demand grows.
  const demandBound = next.lastWaitMs > next.lastIncreaseMs;
  if (!due || !demandBound) {
    return next;
  }
  // The rate held callers back for a whole interval and no throttled answer came (one
  // would have moved lastIncreaseMs past now): it passed.
  const passedRate = Math.max(next.passedRate, next.rate);
  const passed = { ...next, passedRate, estimate: Math.max(next.estimate, passedRate) };
  if (next.rate >= config.maxRate) {
    return passed;
  }
  const step = probeStep(next, config, nowMs);
  const target = next.rate + step;
  // Climbing back fast stops at the measured rate; from there the slow probe takes over.
  const capped = next.probeBaseRate > next.rate && target > next.probeBaseRate ? next.probeBaseRate : target;
  return { ...passed, rate: Math.min(config.maxRate, capped), lastIncreaseMs: nowMs };
}

/**
 * What a budget hands on to the next one of the same credential (undefined: nothing
 * learned yet): its estimate, as the start and as the measured base to probe slowly above.
 */
function learnedOf(state: BudgetState): LearnedRate | undefined {
  return state.estimate > 0 ? { rate: state.estimate, probeBaseRate: state.estimate } : undefined;
}

/** The budget's transitions; each takes the state and the current time and returns the next state. */
export const budgetTransitions = { initial, acquire, throttled, success, capacity, learnedOf } as const;

/** The constants of the measured decrease and the slow probe; the Lua mirror receives them as they are here. */
export const BUDGET_CONSTANTS = { MIN_WINDOW_MS, MIN_CUT, MAX_WINDOW_PAUSE_MS, PROBE_GROWTH } as const;
