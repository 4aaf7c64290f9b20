import { describe, expect, it } from 'vitest';
import { inPool } from '../../../../src/sync/write/in-pool.ts';

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('inPool', () => {
  it('runs every item, never more than `size` at once', async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    await inPool([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 4, async (n) => {
      running += 1;
      most = Math.max(most, running);
      for (let i = 0; i < n % 3; i += 1) await tick();
      done.push(n);
      running -= 1;
    });
    expect(done.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(most).toBe(4);
  });

  it('after a failure starts nothing more, lets those in flight finish, then throws that failure', async () => {
    const started: number[] = [];
    const finished: number[] = [];
    const run = inPool([1, 2, 3, 4, 5, 6, 7, 8], 3, async (n) => {
      started.push(n);
      await tick();
      if (n === 2) throw new Error('row 2 refused');
      await tick();
      finished.push(n);
    });
    await expect(run).rejects.toThrow('row 2 refused');
    // 1, 2, 3 started together; 2 failed before 1 and 3 finished, so nothing else started.
    expect(started).toEqual([1, 2, 3]);
    expect(finished.sort()).toEqual([1, 3]);
  });

  it('does nothing for no items', async () => {
    await expect(inPool([], 4, () => Promise.reject(new Error('never')))).resolves.toBeUndefined();
  });
});
