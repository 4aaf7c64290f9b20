import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, it, expect } from 'vitest';
import { createLimiterTestRedis, REDIS_URL } from './fixtures/limiter-redis.ts';
import type { WorkerReport } from './fixtures/limiter-worker.ts';

/**
 * Separate OS processes sharing one budget through real Redis. Every bound below is
 * derived from the token bucket, not from how fast this machine is: a grant is recorded
 * (Date.now in the worker) at or after the moment Redis handed out its token, so
 * "recorded before T" implies "granted before T", and Redis and the workers read the
 * same host clock.
 */
const WORKER = fileURLToPath(new URL('./fixtures/limiter-worker.ts', import.meta.url));
// Node takes a moment to boot a TypeScript worker on a busy 2-core box; all workers
// start requesting at the same instant after that.
const BOOT_MS = 3000;
const env = createLimiterTestRedis('limiter-shared-budget');

afterAll(async () => {
  await env.cleanup();
});

function runWorker(config: Record<string, unknown>): Promise<WorkerReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, JSON.stringify({ redisUrl: REDIS_URL, ...config })], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`limiter worker exited with ${String(code)}: ${err}`));
      else resolve(JSON.parse(out) as WorkerReport);
    });
  });
}

function countBetween(times: number[], from: number, to: number): number {
  return times.filter((t) => t >= from && t < to).length;
}

describe('shared rate budget across processes', () => {
  it('keeps the combined rate of three processes within the configured budget', async () => {
    const rate = 20;
    const durationMs = 3000;
    const startAt = Date.now() + BOOT_MS;
    const limiter = {
      budgetKey: env.key('combined'),
      initialRatePerSec: rate,
      maxRatePerSec: rate,
      burstMs: 200,
    };
    const reports = await Promise.all(
      [1, 2, 3].map(() => runWorker({ limiter, startAt, durationMs, lanes: 4 })),
    );
    const all = reports.flatMap((r) => r.grants).sort((a, b) => a - b);
    const burst = Math.max(1, (rate * 200) / 1000);

    // Cumulative bound per 500 ms window: never more than the bucket depth plus the rate.
    for (let w = 500; w <= durationMs; w += 500) {
      expect(countBetween(all, startAt, startAt + w)).toBeLessThanOrEqual(burst + (rate * w) / 1000 + 1);
    }
    // Every process was granted some of it. How much of the budget they use together is a
    // speed, measured by bench/throttled-shared.ts (shareOfCeiling), not asserted here.
    for (const r of reports) expect(r.grants.length).toBeGreaterThan(0);
  });

  it('a throttled answer in one process pauses and slows the other', async () => {
    const rate = 20;
    const backoff51Ms = 1500;
    const durationMs = 4000;
    const startAt = Date.now() + BOOT_MS;
    const limiter = {
      budgetKey: env.key('throttle'),
      initialRatePerSec: rate,
      maxRatePerSec: rate,
      decreaseFactor: 0.5,
      backoff51Ms,
    };
    const [a, b] = await Promise.all([
      runWorker({ limiter, startAt, durationMs, lanes: 2, throttleAfter: { grants: 10, code: 51 } }),
      runWorker({ limiter, startAt, durationMs, lanes: 2 }),
    ]);
    expect(a.throttle).toBeDefined();
    const throttle = a.throttle!;
    // The pause starts between throttle.before and throttle.after (Redis time) and lasts backoff51Ms.
    // 300 ms of slack covers a grant made just before the pause but recorded late.
    const quietFrom = throttle.after + 300;
    const quietTo = throttle.before + backoff51Ms;
    expect(countBetween(b.grants, quietFrom, quietTo)).toBe(0);
    expect(countBetween(a.grants, quietFrom, quietTo)).toBe(0);
    // B never saw a throttled answer itself, yet it runs at the halved shared rate.
    expect(b.finalRate).toBe(rate / 2);
    const end = startAt + durationMs;
    const afterPause = countBetween([...a.grants, ...b.grants], quietTo, end);
    expect(afterPause).toBeLessThanOrEqual(((rate / 2) * (end - quietTo)) / 1000 + 1);
    expect(countBetween(b.grants, quietTo, end)).toBeGreaterThan(0);
  });
});
