import { afterEach, beforeEach, describe, it, expect, vi } from 'vitest';
import { createRateLimiter } from '../../../../src/api/limiter/create-rate-limiter.ts';
import type { RateLimiter } from '../../../../src/api/limiter/create-rate-limiter.ts';

/**
 * The in-process budget under fake timers: Date.now and setTimeout move only when the
 * test says so. Start times are checked to within 10 ms: the limiter adds a few
 * ms of jitter to each wait for a token.
 */
describe('rate limiter without Redis', () => {
  let limiter: RateLimiter | undefined;
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(async () => {
    const stopping = limiter?.stop();
    await vi.advanceTimersByTimeAsync(100);
    await stopping;
    limiter = undefined;
    vi.useRealTimers();
  });

  /** Offsets of start times from `origin`, rounded down to the 10 ms the bottleneck hops may add. */
  function offsets(started: number[], origin = 1_000_000): number[] {
    return started.map((t) => Math.floor((t - origin) / 10) * 10);
  }

  function make(options: Parameters<typeof createRateLimiter>[0]): RateLimiter {
    limiter = createRateLimiter({ now: () => Date.now(), ...options });
    return limiter;
  }

  /** Schedules n jobs that record the (fake) time they started. */
  function scheduleMany(l: RateLimiter, n: number): { started: number[]; done: Promise<number[]> } {
    const started: number[] = [];
    const done = Promise.all(
      Array.from({ length: n }, (_, i) =>
        l.schedule(() => {
          started.push(Date.now());
          return Promise.resolve(i);
        }),
      ),
    );
    return { started, done };
  }

  it('paces jobs at the budget rate', async () => {
    const l = make({ budgetKey: 'unit:pace', initialRatePerSec: 10, maxRatePerSec: 10 });
    const { started, done } = scheduleMany(l, 5);
    await vi.advanceTimersByTimeAsync(50);
    expect(started).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(200);
    expect(started).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(250);
    expect(await done).toEqual([0, 1, 2, 3, 4]);
    expect(offsets(started)).toEqual([0, 100, 200, 300, 400]);
  });

  it('runs at most maxConcurrent jobs at once', async () => {
    const l = make({
      budgetKey: 'unit:conc',
      initialRatePerSec: 1000,
      maxRatePerSec: 1000,
      burstMs: 1000,
      maxConcurrent: 2,
    });
    let running = 0;
    let peak = 0;
    const jobs = Array.from({ length: 6 }, (_, i) =>
      l.schedule(async () => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 50));
        running -= 1;
        return i;
      }),
    );
    await vi.advanceTimersByTimeAsync(20);
    expect(running).toBe(2);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await Promise.all(jobs)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(peak).toBe(2);
  });

  it('passes a job failure through to the caller and keeps serving others', async () => {
    const l = make({ budgetKey: 'unit:fail', initialRatePerSec: 100, maxRatePerSec: 100 });
    const failing = l.schedule(() => Promise.reject(new Error('boom')));
    const ok = l.schedule(() => Promise.resolve('ok'));
    const failed = expect(failing).rejects.toThrow('boom');
    await vi.advanceTimersByTimeAsync(100);
    await failed;
    expect(await ok).toBe('ok');
  });

  it('pauses for backoff51Ms after code 51 and lowers the rate', async () => {
    const l = make({
      budgetKey: 'unit:51',
      initialRatePerSec: 10,
      maxRatePerSec: 10,
      decreaseFactor: 0.5,
      backoff51Ms: 2000,
    });
    await l.onThrottled({ code: 51 });
    expect(l.currentRate()).toBe(5);
    const { started } = scheduleMany(l, 2);
    await vi.advanceTimersByTimeAsync(1990);
    expect(started).toHaveLength(0);
    // The first request goes when the pause ends, the next one at the new pace (5/s).
    await vi.advanceTimersByTimeAsync(60);
    expect(offsets(started)).toEqual([2000]);
    await vi.advanceTimersByTimeAsync(200);
    expect(offsets(started)).toEqual([2000, 2200]);
  });

  it('pauses for the longer backoff90000Ms after code 90000', async () => {
    const l = make({
      budgetKey: 'unit:90000',
      initialRatePerSec: 10,
      backoff51Ms: 1000,
      backoff90000Ms: 60_000,
    });
    await l.onThrottled({ code: 90000 });
    const { started } = scheduleMany(l, 1);
    await vi.advanceTimersByTimeAsync(59_000);
    expect(started).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(2000);
    expect(started).toHaveLength(1);
  });

  it('honours Retry-After instead of the configured backoff', async () => {
    const l = make({ budgetKey: 'unit:ra', initialRatePerSec: 10, backoff51Ms: 60_000, decreaseFactor: 0.5 });
    await l.onThrottled({ code: 429, retryAfterMs: 3000 });
    const { started } = scheduleMany(l, 1);
    await vi.advanceTimersByTimeAsync(2990);
    expect(started).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(100);
    expect(offsets(started)).toEqual([3000]);
  });

  it('probes the rate back up while successes keep coming and demand exceeds it', async () => {
    const l = make({
      budgetKey: 'unit:probe',
      initialRatePerSec: 10,
      maxRatePerSec: 14,
      increasePerSec: 2,
      increaseIntervalMs: 500,
      decreaseFactor: 0.5,
      backoff51Ms: 100,
    });
    await l.onThrottled({ code: 51 });
    expect(l.currentRate()).toBe(5);
    const rates: number[] = [];
    const jobs: Promise<void>[] = [];
    for (let i = 0; i < 40; i += 1) {
      jobs.push(
        l.schedule(() => {
          l.onSuccess();
          rates.push(l.currentRate());
          return Promise.resolve();
        }),
      );
    }
    await vi.advanceTimersByTimeAsync(10_000);
    await Promise.all(jobs);
    expect(rates.at(-1)).toBe(14);
    expect(rates).toContain(7);
    expect(rates).toContain(9);
  });

  it('rejects waiting and new jobs once stopped', async () => {
    const l = make({ budgetKey: 'unit:stop', initialRatePerSec: 1, maxRatePerSec: 1 });
    const first = l.schedule(() => Promise.resolve(1));
    const waiting = l.schedule(() => Promise.resolve(2));
    const waitingRejected = expect(waiting).rejects.toThrow(/rate limiter for unit:stop was stopped/);
    await vi.advanceTimersByTimeAsync(50);
    expect(await first).toBe(1);
    const stopping = l.stop();
    await vi.advanceTimersByTimeAsync(50);
    await stopping;
    await waitingRejected;
    await expect(l.schedule(() => Promise.resolve(3))).rejects.toThrow(/was stopped/);
  });
});
