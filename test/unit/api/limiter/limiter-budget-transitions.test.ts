import { describe, it, expect } from 'vitest';
import { budgetTransitions } from '../../../../src/api/limiter/budget-transitions.ts';
import type { BudgetConfig, BudgetState } from '../../../../src/api/limiter/budget-transitions.ts';

const config: BudgetConfig = {
  initialRate: 10,
  minRate: 1,
  maxRate: 20,
  decreaseFactor: 0.5,
  increasePerSec: 2,
  increaseIntervalMs: 1000,
  burstMs: 200,
};

/** Takes tokens at `at` until the bucket says wait; returns how many were taken. */
function drain(state: BudgetState, at: number): { state: BudgetState; taken: number; waitMs: number } {
  let taken = 0;
  for (;;) {
    const r = budgetTransitions.acquire(state, config, at);
    state = r.state;
    if (r.waitMs > 0) return { state, taken, waitMs: r.waitMs };
    taken += 1;
  }
}

describe('budget token bucket', () => {
  it('hands out one token on a fresh budget, then asks to wait 1/rate', () => {
    const s0 = budgetTransitions.initial(config, 1000);
    const first = drain(s0, 1000);
    expect(first.taken).toBe(1);
    expect(first.waitMs).toBeCloseTo(100, 9);
  });

  it('refills at the rate and never beyond the burst allowance', () => {
    let s = drain(budgetTransitions.initial(config, 0), 0).state;
    // 1 s at 10/s is 10 tokens, but the bucket holds only 200 ms worth: 2.
    const afterIdle = drain(s, 1000);
    expect(afterIdle.taken).toBe(2);
    s = afterIdle.state;
    // Then rate * elapsed, fractions carried over.
    const a = drain(s, 1100);
    expect(a.taken).toBe(1);
    const b = drain(a.state, 1250);
    expect(b.taken).toBe(1);
    expect(drain(b.state, 1300).taken).toBe(1);
  });

  it('grants no more than burst + rate * window over any window when polled continuously', () => {
    let s = budgetTransitions.initial(config, 0);
    let granted = 0;
    for (let t = 0; t <= 5000; t += 7) {
      const r = drain(s, t);
      s = r.state;
      granted += r.taken;
    }
    expect(granted).toBeLessThanOrEqual(1 + 10 * 5);
    expect(granted).toBeGreaterThanOrEqual(10 * 5 - 1);
  });

  it('keeps at least one token of depth when the rate is tiny', () => {
    expect(budgetTransitions.capacity(0.5, config)).toBe(1);
    expect(budgetTransitions.capacity(50, config)).toBe(10);
  });
});

describe('budget throttling (multiplicative decrease)', () => {
  it('pauses for the given time and multiplies the rate by decreaseFactor', () => {
    const s = budgetTransitions.throttled(budgetTransitions.initial(config, 0), config, 100, 2000);
    expect(s.rate).toBe(5);
    expect(s.pausedUntilMs).toBe(2100);
    const during = budgetTransitions.acquire(s, config, 1100);
    expect(during.waitMs).toBe(1000);
  });

  it('lowers the rate once for a burst of throttled answers inside one pause window', () => {
    let s = budgetTransitions.initial(config, 0);
    s = budgetTransitions.throttled(s, config, 100, 2000);
    s = budgetTransitions.throttled(s, config, 150, 2000);
    s = budgetTransitions.throttled(s, config, 900, 500);
    expect(s.rate).toBe(5);
    // A later, longer pause (e.g. a Retry-After) extends the window; a shorter one does not shorten it.
    expect(s.pausedUntilMs).toBe(2150);
    s = budgetTransitions.throttled(s, config, 2200, 1000);
    expect(s.rate).toBe(2.5);
  });

  it('never drops below minRate', () => {
    let s = budgetTransitions.initial(config, 0);
    for (let i = 0; i < 10; i += 1) s = budgetTransitions.throttled(s, config, i * 10_000, 100);
    expect(s.rate).toBe(config.minRate);
  });

  it('resumes at the end of the pause with one request, then at the new pace, without a burst', () => {
    let s = budgetTransitions.initial(config, 0);
    s = budgetTransitions.throttled(s, config, 0, 1000);
    expect(drain(s, 999).taken).toBe(0);
    const atEnd = drain(s, 1000);
    expect(atEnd.taken).toBe(1);
    // 5/s: the next token 200 ms later, not the bucket that idled through the pause.
    expect(atEnd.waitMs).toBeCloseTo(200, 9);
    expect(drain(s, 1200).taken).toBe(1);
  });
});

describe('budget probing (additive increase)', () => {
  function saturated(s: BudgetState, at: number): BudgetState {
    return drain(s, at).state;
  }

  it('raises the rate by increasePerSec at most once per interval while callers wait for tokens', () => {
    let s = saturated(budgetTransitions.initial(config, 0), 0);
    s = budgetTransitions.success(s, config, 500);
    expect(s.rate).toBe(10);
    s = saturated(s, 1000);
    s = budgetTransitions.success(s, config, 1000);
    expect(s.rate).toBe(12);
    s = saturated(s, 1500);
    s = budgetTransitions.success(s, config, 1500);
    expect(s.rate).toBe(12);
    s = saturated(s, 2000);
    s = budgetTransitions.success(s, config, 2000);
    expect(s.rate).toBe(14);
  });

  it('does not raise the rate when the budget is not what holds callers back', () => {
    let s = budgetTransitions.initial(config, 0);
    for (let t = 1000; t <= 10_000; t += 1000) {
      s = budgetTransitions.acquire(s, config, t).state;
      s = budgetTransitions.success(s, config, t);
    }
    expect(s.rate).toBe(10);
  });

  it('caps the rate at maxRate', () => {
    let s = budgetTransitions.initial(config, 0);
    for (let t = 1000; t <= 20_000; t += 1000) {
      s = saturated(s, t);
      s = budgetTransitions.success(s, config, t);
    }
    expect(s.rate).toBe(config.maxRate);
  });

  it('waits a full interval after a pause before probing up again', () => {
    let s = budgetTransitions.throttled(budgetTransitions.initial(config, 0), config, 0, 2000);
    s = saturated(s, 2500);
    s = budgetTransitions.success(s, config, 2500);
    expect(s.rate).toBe(5);
    s = saturated(s, 3000);
    s = budgetTransitions.success(s, config, 3000);
    expect(s.rate).toBe(7);
  });

  it('settles near a hidden server limit instead of staying at the bottom or the top', () => {
    // A server that throttles above 12 req/s; callers always want more.
    const limit = 12;
    const c: BudgetConfig = { ...config, maxRate: 40, decreaseFactor: 0.7, increasePerSec: 1 };
    let s = budgetTransitions.initial(c, 0);
    const rates: number[] = [];
    for (let t = 0; t < 300_000; t += 100) {
      s = drain(s, t).state;
      if (s.rate > limit && t >= s.pausedUntilMs) s = budgetTransitions.throttled(s, c, t, 1000);
      else s = budgetTransitions.success(s, c, t);
      if (t > 60_000) rates.push(s.rate);
    }
    const mean = rates.reduce((a, b) => a + b, 0) / rates.length;
    expect(Math.max(...rates)).toBeLessThanOrEqual(limit + 1);
    expect(mean).toBeGreaterThan(limit * 0.7);
  });
});

describe('a budget started from a learned rate (issue 24 §6)', () => {
  it('starts at the learned rate, within maxRate, and probes slowly above a measured one', () => {
    const s = budgetTransitions.initial(config, 5000, { rate: 14, probeBaseRate: 14 });
    expect(s).toMatchObject({ rate: 14, probeBaseRate: 14, probeFromMs: 5000 });
    expect(budgetTransitions.initial(config, 0, { rate: 30, probeBaseRate: 30 })).toMatchObject({
      rate: 20,
      probeBaseRate: 20,
    });
    // Demand-bound one second later: a plain budget climbs increasePerSec, this one barely.
    const waited = { ...s, lastWaitMs: 5500 };
    expect(budgetTransitions.success(waited, config, 6000).rate).toBeLessThan(14.01);
    const unlearned = { ...budgetTransitions.initial(config, 5000), rate: 14, lastWaitMs: 5500 };
    expect(budgetTransitions.success(unlearned, config, 6000).rate).toBe(16);
  });

  it('ignores a learned rate of 0 and starts at initialRate', () => {
    expect(budgetTransitions.initial(config, 0, { rate: 0, probeBaseRate: 0 }).rate).toBe(10);
  });
});
