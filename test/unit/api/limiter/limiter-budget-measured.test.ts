import { describe, expect, it } from 'vitest';
import { budgetTransitions } from '../../../../src/api/limiter/budget-transitions.ts';
import type { BudgetConfig, BudgetState } from '../../../../src/api/limiter/budget-transitions.ts';

const config: BudgetConfig = {
  initialRate: 20,
  minRate: 0.5,
  maxRate: 50,
  decreaseFactor: 0.8,
  increasePerSec: 1,
  increaseIntervalMs: 1000,
  burstMs: 200,
};

/** Clock origin: a real clock never reads 0, which the budget uses for "no window open". */
const T0 = 1_000_000;

/** Takes tokens at `at` until the budget says wait: callers are waiting, the budget binds. */
function saturate(state: BudgetState, at: number): BudgetState {
  let s = state;
  for (;;) {
    const r = budgetTransitions.acquire(s, config, at);
    s = r.state;
    if (r.waitMs > 0) return s;
  }
}

/** Takes `n` tokens, one every `everyMs` from `from`, regardless of the bucket (a grant count is all that matters here). */
function grant(state: BudgetState, from: number, n: number, everyMs: number): BudgetState {
  let s = state;
  for (let i = 0; i < n; i += 1) {
    s = { ...s, tokens: Math.max(s.tokens, 1) };
    s = budgetTransitions.acquire(s, config, from + i * everyMs).state;
  }
  return s;
}

describe('budget: decrease measured between two throttled answers', () => {
  it('cuts by decreaseFactor on a budget never throttled before', () => {
    const s = budgetTransitions.throttled(budgetTransitions.initial(config, T0), config, T0 + 1000, 1000);
    expect(s.rate).toBe(16);
    expect(s.probeBaseRate).toBe(0);
  });

  it('goes to the rate the server delivered between two throttled answers', () => {
    let s = budgetTransitions.throttled(budgetTransitions.initial(config, T0), config, T0, 1000);
    // 95 tokens from the end of the pause to 10 s: the server delivered 9.5/s over the window.
    s = grant(s, T0 + 1000, 95, 90);
    s = budgetTransitions.throttled({ ...s, rate: 11 }, config, T0 + 10_000, 1000);
    expect(s.rate).toBeCloseTo(9.5, 9);
    expect(s.probeBaseRate).toBeCloseTo(9.5, 9);
    expect(s.probeFromMs).toBe(T0 + 11_000);
  });

  it('never cuts more than decreaseFactor, nor less than 3%, on a measured window', () => {
    const throttledAgain = (grants: number): number => {
      let s = budgetTransitions.throttled(budgetTransitions.initial(config, T0), config, T0, 1000);
      s = grant(s, T0 + 1000, grants, 10);
      return budgetTransitions.throttled({ ...s, rate: 10 }, config, T0 + 10_000, 1000).rate;
    };
    // 10 grants in 10 s measure 1/s: the cut stops at 10 * 0.8.
    expect(throttledAgain(10)).toBe(8);
    // 200 grants measure 20/s, above the rate: it still drops by 3%.
    expect(throttledAgain(200)).toBeCloseTo(9.7, 9);
  });

  it('does not measure across a long pause (a quota answer): the next cut is the plain one', () => {
    let s = budgetTransitions.throttled(budgetTransitions.initial(config, T0), config, T0, 60_000);
    expect(s.windowStartMs).toBe(0);
    s = grant(s, T0 + 60_000, 50, 100);
    s = budgetTransitions.throttled({ ...s, rate: 10 }, config, T0 + 70_000, 1000);
    expect(s.rate).toBe(8);
  });
});

describe('budget: probing above a measured rate', () => {
  it('starts with tiny steps that grow with the time since the pause, back to increasePerSec', () => {
    let s = budgetTransitions.throttled(budgetTransitions.initial(config, T0), config, T0, 1000);
    s = grant(s, T0 + 1000, 100, 90);
    s = budgetTransitions.throttled({ ...s, rate: 12 }, config, T0 + 10_000, 1000);
    const base = s.rate;
    const steps: number[] = [];
    for (let t = T0 + 12_000; t <= T0 + 60_000; t += 1000) {
      // Callers wait for tokens all along (the budget binds), so every interval may step up.
      s = saturate(s, t);
      const before = s.rate;
      s = budgetTransitions.success(s, config, t);
      steps.push(s.rate - before);
    }
    expect(steps[0]).toBeGreaterThan(0);
    expect(steps[0]).toBeLessThan(0.01 * base);
    for (let i = 1; i < steps.length; i += 1) expect(steps[i]).toBeGreaterThan(steps[i - 1]!);
    // Twenty seconds on, still within 15% of the measured rate (plain AIMD: +20 req/s).
    expect(base + steps.slice(0, 20).reduce((a, b) => a + b, 0)).toBeLessThan(base * 1.15);
    // Far from the last throttle the step is the plain additive one again.
    for (let t = T0 + 61_000; t <= T0 + 400_000; t += 1000) {
      s = saturate(s, t);
      s = budgetTransitions.success(s, config, t);
    }
    expect(s.rate).toBe(config.maxRate);
  });
});

describe('budget against a token-bucket server it is never told about', () => {
  /**
   * A server like the emulator's: `limit` tokens/s, `burst` deep, answers 51 when empty.
   * The client always has work, asks its budget every 5 ms and sends what it is granted;
   * a 51 pauses the budget for 1 s. Simulated clock, no timers.
   */
  function run(limit: number, burst: number, seconds: number): { delivered: number; throttled: number } {
    const c: BudgetConfig = { ...config, initialRate: 2 * limit };
    let s = budgetTransitions.initial(c, T0);
    let server = { tokens: burst, at: T0 };
    let delivered = 0;
    let throttled = 0;
    let lastSuccess = -Infinity;
    for (let t = T0; t < T0 + seconds * 1000; t += 5) {
      for (;;) {
        const r = budgetTransitions.acquire(s, c, t);
        s = r.state;
        if (r.waitMs > 0) break;
        const tokens = Math.min(burst, server.tokens + ((t - server.at) / 1000) * limit);
        server = { tokens, at: t };
        if (tokens >= 1) {
          server.tokens -= 1;
          delivered += 1;
          if (t - lastSuccess >= 250) {
            lastSuccess = t;
            s = budgetTransitions.success(s, c, t);
          }
        } else {
          throttled += 1;
          s = budgetTransitions.throttled(s, c, t, 1000);
        }
      }
    }
    return { delivered, throttled };
  }

  it('starting at twice the limit, delivers 98% of it with at most a handful of throttled answers', () => {
    for (const [limit, burst] of [
      [10, 10],
      [25, 25],
      [5, 5],
    ] as const) {
      // At least 600 requests, as the bench writes 60,000 rows in batches of 100.
      const seconds = Math.max(60, 600 / limit);
      const { delivered, throttled } = run(limit, burst, seconds);
      expect({ limit, delivered: delivered >= 0.98 * limit * seconds }).toEqual({ limit, delivered: true });
      expect({ limit, throttled: throttled <= 0.01 * (delivered + throttled) }).toEqual({
        limit,
        throttled: true,
      });
    }
  });
});
