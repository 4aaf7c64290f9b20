/**
 * How close the AIMD limiter settles to a server limit it is never told about.
 *
 * A simulated server throttles (code 51) whenever more than `limit` requests started in
 * the last second; workers keep `lanes` requests queued, report each answer to their
 * limiter and print one JSON object with per-second served/throttled counts.
 *
 * Usage: node bench/limiter.ts [--limit 25] [--seconds 30] [--workers 2] [--redis]
 * With --redis the workers share one budget through REDIS_URL (default
 * redis://127.0.0.1:6379) under a fresh key that is deleted afterwards.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createRateLimiter } from '../src/api/limiter/create-rate-limiter.ts';
import type { RateLimiter } from '../src/api/limiter/create-rate-limiter.ts';

const { values } = parseArgs({
  options: {
    limit: { type: 'string', default: '25' },
    seconds: { type: 'string', default: '30' },
    workers: { type: 'string', default: '2' },
    redis: { type: 'boolean', default: false },
  },
});
const limit = Number(values.limit);
const seconds = Number(values.seconds);
const workers = Number(values.workers);
if (!(limit > 0) || !(seconds > 0) || !Number.isInteger(workers) || workers < 1) {
  throw new RangeError('bench/limiter.ts: --limit and --seconds must be > 0, --workers an integer >= 1');
}
if (workers > 1 && !values.redis) {
  throw new RangeError(
    'bench/limiter.ts: --workers > 1 needs --redis (without Redis each worker has its own budget)',
  );
}

const budgetKey = `rowbridge:bench:limiter:${randomUUID()}`;
const connections: Redis[] = [];
const limiters: RateLimiter[] = Array.from({ length: workers }, () => {
  const redis = values.redis ? new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379') : undefined;
  if (redis) connections.push(redis);
  return createRateLimiter({
    budgetKey,
    ...(redis ? { redis } : {}),
    initialRatePerSec: 5,
    maxRatePerSec: limit * 3,
    backoff51Ms: 1000,
  });
});

const started = Date.now();
const end = started + seconds * 1000;
const recent: number[] = [];
const perSecond = Array.from({ length: Math.ceil(seconds) }, () => ({ served: 0, throttled: 0, rate: 0 }));

function serve(limiter: RateLimiter): Promise<void> {
  const now = Date.now();
  while (recent.length > 0 && recent[0]! <= now - 1000) recent.shift();
  const bucket = perSecond[Math.floor((now - started) / 1000)];
  if (recent.length >= limit) {
    if (bucket) bucket.throttled += 1;
    return Promise.resolve(limiter.onThrottled({ code: 51 }));
  }
  recent.push(now);
  if (bucket) {
    bucket.served += 1;
    bucket.rate = limiter.currentRate();
  }
  limiter.onSuccess();
  return new Promise((resolve) => setTimeout(resolve, 20));
}

async function lane(limiter: RateLimiter): Promise<void> {
  while (Date.now() < end) await limiter.schedule(() => serve(limiter));
}

await Promise.all(limiters.flatMap((l) => Array.from({ length: 8 }, () => lane(l))));
for (const l of limiters) await l.stop();
if (connections[0]) await connections[0].del(budgetKey);
for (const c of connections) await c.quit();

const steady = perSecond.slice(Math.floor(perSecond.length / 2));
const served = steady.reduce((n, s) => n + s.served, 0);
const throttled = steady.reduce((n, s) => n + s.throttled, 0);
process.stdout.write(
  `${JSON.stringify({
    limit,
    seconds,
    workers,
    redis: values.redis,
    steadyServedPerSec: served / steady.length,
    steadyShareOfLimit: served / steady.length / limit,
    steadyThrottledPerSec: throttled / steady.length,
    perSecond,
  })}\n`,
);
