import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRateLimiter } from '../../../../src/api/limiter/create-rate-limiter.ts';
import { createSlotQueue } from '../../../../src/api/limiter/create-slot-queue.ts';

describe('slot queue', () => {
  it('hands slots out first come, first served, never more than its size at once', async () => {
    const slots = createSlotQueue(2);
    const order: number[] = [];
    const holders = Array.from({ length: 5 }, (_, i) =>
      slots.acquire().then(() => {
        order.push(i);
      }),
    );
    await Promise.resolve();
    await Promise.resolve();
    expect(order).toEqual([0, 1]);
    expect(slots.active).toBe(2);
    expect(slots.waiting).toBe(3);
    slots.release();
    await holders[2];
    expect(order).toEqual([0, 1, 2]);
    expect(slots.active).toBe(2);
    slots.release();
    slots.release();
    await Promise.all(holders);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    slots.release();
    slots.release();
    expect(slots.active).toBe(0);
  });

  it('rejects waiters and later callers once closed, and keeps held slots countable', async () => {
    const slots = createSlotQueue(1);
    await slots.acquire();
    const waiting = slots.acquire();
    slots.close(new Error('closed for the test'));
    await expect(waiting).rejects.toThrow('closed for the test');
    await expect(slots.acquire()).rejects.toThrow('closed for the test');
    expect(slots.active).toBe(1);
    slots.release();
    expect(slots.active).toBe(0);
  });

  it('refuses a size that is not a positive integer, naming it', () => {
    expect(() => createSlotQueue(0)).toThrow('slot queue size must be an integer >= 1, got 0');
    expect(() => createSlotQueue(1.5)).toThrow('got 1.5');
  });
});

describe('rate limiter hot path', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('starts calls the budget allows without waiting for any timer', async () => {
    // With frozen timers, a limiter that needed a timer tick per call (bottleneck's local
    // datastore did) would never finish; this one must run all of them. The budget's own
    // clock moves 1 ms per reading, so tokens refill without any timer firing.
    vi.useFakeTimers({ now: 1_000_000 });
    let clock = 1_000_000;
    const limiter = createRateLimiter({
      budgetKey: 'unit:hot-path',
      now: () => (clock += 1),
      initialRatePerSec: 1e6,
      maxRatePerSec: 1e6,
      burstMs: 1000,
      maxConcurrent: 4,
    });
    let running = 0;
    let peak = 0;
    const results = await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        limiter.schedule(async () => {
          running += 1;
          peak = Math.max(peak, running);
          // Stands in for a request: long enough (in microtasks) for the others to start.
          for (let hop = 0; hop < 50; hop += 1) await Promise.resolve();
          running -= 1;
          return i;
        }),
      ),
    );
    expect(results).toEqual(Array.from({ length: 500 }, (_, i) => i));
    expect(peak).toBe(4);
    await limiter.stop();
  });
});
