import { describe, expect, it } from 'vitest';
import { budgetTransitions } from '../../../../src/api/limiter/budget-transitions.ts';
import type {
  BudgetConfig,
  BudgetState,
  LearnedRate,
} from '../../../../src/api/limiter/budget-transitions.ts';

/** The limiter's defaults (LIMITER_DEFAULTS), as the benches run them. */
const config: BudgetConfig = {
  initialRate: 20,
  minRate: 0.5,
  maxRate: 50,
  decreaseFactor: 0.7,
  increasePerSec: 1,
  increaseIntervalMs: 1000,
  burstMs: 200,
};

/** Clock origin: a real clock never reads 0, which the budget uses for "no window open". */
const T0 = 1_000_000;

/** Callers take every token the budget has from `from` to `to`, every 10 ms: the budget binds. */
function busy(state: BudgetState, from: number, to: number): BudgetState {
  let s = state;
  for (let t = from; t < to; t += 10) {
    for (;;) {
      const r = budgetTransitions.acquire(s, config, t);
      s = r.state;
      if (r.waitMs > 0) break;
    }
  }
  return s;
}

/** Busy callers for `seconds`, reporting success once a second (the rate may step up each time). */
function busySeconds(state: BudgetState, from: number, seconds: number): BudgetState {
  let s = state;
  for (let i = 0; i < seconds; i += 1) {
    s = busy(s, from + i * 1000, from + (i + 1) * 1000);
    s = budgetTransitions.success(s, config, from + (i + 1) * 1000);
  }
  return s;
}

/** `n` more tokens handed out at `at`, whatever the bucket holds: only the window's count matters here. */
function extraGrants(state: BudgetState, at: number, n: number): BudgetState {
  let s = state;
  for (let i = 0; i < n; i += 1) {
    s = budgetTransitions.acquire({ ...s, tokens: Math.max(s.tokens, 1) }, config, at).state;
  }
  return s;
}

describe('a budget started from a learned rate (issue 24 §6)', () => {
  it('opens a measurement window: one throttled answer costs the small step, not decreaseFactor', () => {
    let s = budgetTransitions.initial(config, T0, { rate: 20, probeBaseRate: 20 });
    s = busy(s, T0, T0 + 3000);
    s = budgetTransitions.throttled(s, config, T0 + 3000, 1000);
    // 3% below where it was; a budget without a learned rate would drop to 14.
    expect(s.rate).toBeCloseTo(19.4, 9);
    expect(budgetTransitions.learnedOf(s)?.rate).toBeCloseTo(19.4, 9);
  });

  it('starts without a window, as before, when nothing was learned', () => {
    let s = budgetTransitions.initial(config, T0);
    s = busy(s, T0, T0 + 3000);
    s = budgetTransitions.throttled(s, config, T0 + 3000, 1000);
    expect(s.rate).toBe(14);
  });
});

describe('the rate a budget hands on (issue 24 §6)', () => {
  it('is nothing before a rate held callers back through an interval, then the highest that passed', () => {
    let s = budgetTransitions.initial(config, T0);
    expect(budgetTransitions.learnedOf(s)).toBeUndefined();
    s = busySeconds(s, T0, 3);
    // 20, 21 and 22 each held a whole second without a throttled answer; 23 is untried.
    expect(s.rate).toBe(23);
    expect(budgetTransitions.learnedOf(s)).toEqual({ rate: 22, probeBaseRate: 22 });
  });

  it('after an unmeasured cut, is the highest rate that passed before it', () => {
    let s = busySeconds(budgetTransitions.initial(config, T0), T0, 3);
    s = budgetTransitions.throttled(s, config, T0 + 3500, 1000);
    expect(s.rate).toBeCloseTo(16.1, 9);
    expect(budgetTransitions.learnedOf(s)?.rate).toBe(22);
  });

  it('after a window the server bound all along, is the rate it measured', () => {
    // Learned 14 against a server of 10/s: the first throttled answer is the small step...
    let s = budgetTransitions.initial(config, T0, { rate: 14, probeBaseRate: 14 });
    s = extraGrants(s, T0, 42);
    s = budgetTransitions.throttled(s, config, T0 + 3000, 1000);
    expect(s.rate).toBeCloseTo(13.58, 9);
    // ...and the next window, above 10 all along, measures the server: 40 tokens in 4 s.
    s = extraGrants(s, T0 + 4000, 40);
    s = budgetTransitions.throttled(s, config, T0 + 7000, 1000);
    expect(s.rate).toBeCloseTo(10, 9);
    expect(budgetTransitions.learnedOf(s)).toEqual({ rate: s.rate, probeBaseRate: s.rate });
  });

  it('after a window that climbed back from below its measure, is halfway to the highest rate that passed', () => {
    // A plain cut to 14, then a climb, 14 to 20, each rate held a second...
    let s = budgetTransitions.throttled(budgetTransitions.initial(config, T0), config, T0, 1000);
    expect(s.rate).toBe(14);
    s = busySeconds(s, T0 + 1000, 6);
    expect(s.rate).toBe(20);
    // ...plus the burst the server refilled during the pause: 16/s measured over 7.5 s.
    s = extraGrants(s, T0 + 7000, 120 - s.windowGrants);
    s = budgetTransitions.throttled(s, config, T0 + 7500, 1000);
    expect(s.rate).toBeCloseTo(16, 9);
    // 16 counted the server's idle capacity while the budget climbed; 19 passed, 20 did not.
    expect(budgetTransitions.learnedOf(s)?.rate).toBeCloseTo(17.5, 9);
  });
});

describe('the next run, against a token-bucket server it is never told about', () => {
  /**
   * A server like the emulator's: `limit` tokens/s, `burst` deep, 51 when empty. Callers
   * always have work, ask every 5 ms, report success every 250 ms; a 51 pauses for 1 s.
   */
  function run(
    limit: number,
    burst: number,
    requests: number,
    t0: number,
    learned: LearnedRate | undefined,
  ): { seconds: number; throttled: number; state: BudgetState } {
    let s = budgetTransitions.initial(config, t0, learned);
    let server = { tokens: burst, at: t0 };
    let delivered = 0;
    let throttled = 0;
    let lastSuccess = -Infinity;
    let t = t0;
    for (; delivered < requests; t += 5) {
      for (;;) {
        const r = budgetTransitions.acquire(s, config, t);
        s = r.state;
        if (r.waitMs > 0) break;
        server = { tokens: Math.min(burst, server.tokens + ((t - server.at) / 1000) * limit), at: t };
        if (server.tokens >= 1) {
          server.tokens -= 1;
          delivered += 1;
          if (t - lastSuccess >= 250) {
            lastSuccess = t;
            s = budgetTransitions.success(s, config, t);
          }
        } else {
          throttled += 1;
          s = budgetTransitions.throttled(s, config, t, 1000);
        }
      }
    }
    return { seconds: (t - t0) / 1000, throttled, state: s };
  }

  it('starts from what the first run learned and delivers 97% of the limit, at most one throttled answer', () => {
    // The benches: 10 req/s × 200 requests, and 20 req/s (burst 10) × 300 requests.
    for (const [limit, burst, requests] of [
      [10, 10, 200],
      [20, 10, 300],
    ] as const) {
      const first = run(limit, burst, requests, T0, undefined);
      const learned = budgetTransitions.learnedOf(first.state);
      const second = run(limit, burst, requests, T0 + 3_600_000, learned);
      const share = requests / second.seconds / limit;
      expect({ limit, share: share >= 0.97 }).toEqual({ limit, share: true });
      expect({ limit, throttled: second.throttled <= 1 }).toEqual({ limit, throttled: true });
    }
  });
});
