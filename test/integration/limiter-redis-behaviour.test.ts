import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, it, expect } from 'vitest';
import { createRateLimiter } from '../../src/api/limiter/create-rate-limiter.ts';
import type { RateLimiter } from '../../src/api/limiter/create-rate-limiter.ts';
import type { RateLimiterOptions } from '../../src/api/limiter/limiter-options.ts';
import { createLimiterTestRedis, REDIS_URL } from './fixtures/limiter-redis.ts';

/**
 * Two limiters with their own Redis connections stand in for two workers sharing a
 * credential (the separate-process proof is limiter-shared-budget.test.ts). Time bounds
 * are only ever lower bounds implied by a pause, never "fast enough" checks.
 */
const env = createLimiterTestRedis('limiter-redis-behaviour');
const opened: { limiter: RateLimiter; redis: Redis }[] = [];

afterEach(async () => {
  for (const { limiter, redis } of opened.splice(0).reverse()) {
    await limiter.stop();
    redis.disconnect();
  }
});
afterAll(async () => {
  await env.cleanup();
});

function open(options: Omit<RateLimiterOptions, 'redis'>, redis = new Redis(REDIS_URL)): RateLimiter {
  const limiter = createRateLimiter({ ...options, redis });
  opened.push({ limiter, redis });
  return limiter;
}

async function pauseLeftMs(key: string): Promise<number> {
  const [sec, usec] = await env.redis.time();
  const pausedUntil = Number(await env.redis.hget(key, 'pausedUntilMs'));
  return pausedUntil - (Number(sec) * 1000 + Number(usec) / 1000);
}

describe('rate limiter on a Redis budget', () => {
  it('probes the shared rate back up to the ceiling once throttling stops', async () => {
    const budgetKey = env.key('probe');
    const options = {
      budgetKey,
      initialRatePerSec: 10,
      maxRatePerSec: 16,
      increasePerSec: 2,
      increaseIntervalMs: 200,
      decreaseFactor: 0.5,
      backoff51Ms: 200,
    };
    const a = open(options);
    const b = open(options);
    await a.onThrottled({ code: 51 });
    expect(a.currentRate()).toBe(5);

    const seen = new Map<RateLimiter, number[]>([
      [a, []],
      [b, []],
    ]);
    const deadline = Date.now() + 20_000;
    const lane = async (limiter: RateLimiter): Promise<void> => {
      while (limiter.currentRate() < 16 && Date.now() < deadline) {
        await limiter.schedule(() => {
          limiter.onSuccess();
          seen.get(limiter)!.push(limiter.currentRate());
          return Promise.resolve();
        });
      }
    };
    await Promise.all([lane(a), lane(a), lane(b), lane(b)]);

    expect(Number(await env.redis.hget(budgetKey, 'rate'))).toBe(16);
    expect(b.currentRate()).toBe(16);
    const all = [...seen.get(a)!, ...seen.get(b)!];
    expect(Math.min(...all)).toBe(5);
    for (const rates of seen.values()) {
      // Additive steps of 2 up to the ceiling, never down without a throttle.
      expect(rates).toEqual([...rates].sort((x, y) => x - y));
      for (const r of rates) expect([5, 7, 9, 11, 13, 15, 16]).toContain(r);
    }
    expect(new Set(all).size).toBeGreaterThanOrEqual(4);
  });

  it('honours Retry-After from one worker in the other', async () => {
    const budgetKey = env.key('retry-after');
    const options = { budgetKey, initialRatePerSec: 20, backoff51Ms: 50 };
    const a = open(options);
    const b = open(options);
    await b.schedule(() => Promise.resolve());

    const before = Date.now();
    await a.onThrottled({ code: 51, retryAfterMs: 1500 });
    // The shared pause is Retry-After's, not backoff51Ms's: b waits it out. Only lower
    // bounds on waiting: a busy machine makes waits longer, never shorter.
    const left = await pauseLeftMs(budgetKey);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(1500);
    const startedAt = await b.schedule(() => Promise.resolve(Date.now()));
    expect(startedAt - before).toBeGreaterThanOrEqual(1500);
  });

  it('pauses for the long backoff after 90000 and a shorter Retry-After does not cut it', async () => {
    const budgetKey = env.key('quota');
    const options = { budgetKey, backoff51Ms: 100, backoff90000Ms: 45_000 };
    const a = open(options);
    const b = open(options);
    await a.onThrottled({ code: 90000 });
    expect(await pauseLeftMs(budgetKey)).toBeGreaterThan(40_000);
    await a.onThrottled({ code: 51, retryAfterMs: 10 });
    expect(await pauseLeftMs(budgetKey)).toBeGreaterThan(40_000);

    let ran = false;
    const waiting = b.schedule(() => {
      ran = true;
      return Promise.resolve();
    });
    const rejected = expect(waiting).rejects.toThrow(`rate limiter for ${budgetKey} was stopped`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await b.stop();
    await rejected;
    expect(ran).toBe(false);
  });

  it('forgets an idle budget but not its learned rate: the next run starts there, a 51 still lowers it', async () => {
    const budgetKey = env.key('idle');
    const options = { budgetKey, initialRatePerSec: 8, backoff51Ms: 100, idleTtlMs: 300 };
    const gone = async (key: string): Promise<void> => {
      const deadline = Date.now() + 10_000;
      while ((await env.redis.exists(key)) === 1 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await env.redis.exists(key)).toBe(0);
    };
    const first = open(options);
    await first.onThrottled({ code: 51 });
    const learned = first.currentRate();
    expect(learned).toBeLessThan(8);
    await gone(budgetKey);

    const next = open(options);
    await next.schedule(() => Promise.resolve());
    expect(next.currentRate()).toBe(learned);
    await new Promise((resolve) => setTimeout(resolve, 150));
    await next.onThrottled({ code: 51 });
    expect(next.currentRate()).toBeLessThan(learned);
    expect(Number(await env.redis.hget(`${budgetKey}:learned`, 'rate'))).toBe(next.currentRate());
    await gone(budgetKey);

    // ROWBRIDGE_MAX_RATE bounds the start; once the learned rate expires too, the initial rate is back.
    const capped = open({ ...options, initialRatePerSec: 1, maxRatePerSec: 2 });
    await capped.schedule(() => Promise.resolve());
    expect(capped.currentRate()).toBe(2);
    await env.redis.del(budgetKey, `${budgetKey}:learned`);
    const fresh = open(options);
    await fresh.schedule(() => Promise.resolve());
    expect(fresh.currentRate()).toBe(8);
  });

  it('fails closed, naming the budget, when Redis is unreachable', async () => {
    const budgetKey = env.key('down');
    const dead = new Redis('redis://127.0.0.1:1', {
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
    });
    // The refused connection is the point of this test; the limiter reports it through its own errors.
    dead.on('error', () => undefined);
    const errors: Error[] = [];
    const limiter = open({ budgetKey, onError: (err) => errors.push(err) }, dead);
    let called = false;
    await expect(
      limiter.schedule(() => {
        called = true;
        return Promise.resolve();
      }),
    ).rejects.toThrow(`rate limiter: budget acquire failed for ${budgetKey}`);
    expect(called).toBe(false);
    await expect(limiter.onThrottled({ code: 51 })).rejects.toThrow(
      `budget throttled failed for ${budgetKey}`,
    );
    limiter.onSuccess();
    await limiter.stop();
    expect(errors.map((e) => e.message)).toEqual([`rate limiter: budget success failed for ${budgetKey}`]);
  });
});
