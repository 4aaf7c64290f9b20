import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../../../src/api/limiter/create-rate-limiter.ts';

describe('rate limiter and async context', () => {
  it('runs each scheduled function in the async context of its caller', async () => {
    const als = new AsyncLocalStorage<string>();
    const limiter = createRateLimiter({
      budgetKey: 'test:context',
      initialRatePerSec: 1000,
      maxRatePerSec: 1000,
      maxConcurrent: 2,
    });
    const seen = await Promise.all(
      ['a', 'b', 'c', 'd', 'e', 'f'].map((name) =>
        als.run(name, () => limiter.schedule(() => Promise.resolve([name, als.getStore()]))),
      ),
    );
    await limiter.stop();
    for (const [name, store] of seen) expect(store).toBe(name);
  });
});
