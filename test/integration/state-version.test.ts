/**
 * One stored-state version per Redis (issue 24 §2): a worker stamps a Redis that has no
 * version with its own, and refuses, from the CLI, a Redis that holds another version's
 * state: exit 1, one clear line, no job taken.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueues } from '../../src/queue/queues.ts';
import { batchJobRows } from '../../src/sync/batch/batch-job-rows.ts';
import { STATE_VERSION } from '../../src/sync/state/state-version.ts';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { orderRow } from '../helpers/batch-rows.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

describe('the state version of a Redis', { timeout: 60_000 }, () => {
  let h: Harness;
  const children: ChildProcess[] = [];
  const versionKey = () => `${h.rt.statePrefix}:version`;

  beforeAll(async () => {
    h = await createHarness('state-version');
  });
  afterAll(async () => {
    killChildren(children);
    await h?.close();
  });

  it('is stamped by the first worker on a Redis that has none', async () => {
    expect(await h.rt.redis.get(versionKey())).toBeNull();
    await h.startWorkers(1).ready;
    expect(await h.rt.redis.get(versionKey())).toBe(String(STATE_VERSION));
    await h.workers?.close();
    h.workers = undefined;
  });

  it('of another version: `worker` refuses with exit 1, naming both versions, and takes no job', async () => {
    await h.rt.redis.set(versionKey(), String(STATE_VERSION + 1));
    const queues = createQueues(h.rt);
    try {
      await queues.batches.add('batch', {
        runId: 'r-other',
        job: 'orders',
        batchNo: 0,
        ...batchJobRows([orderRow(0, 'A')], []),
      });
      const { code, stderr } = await spawnCli(h, children, ['worker', '--no-schedules']).exited;
      expect(code, stderr).toBe(1);
      expect(stderr).toContain(
        `this Redis holds rowbridge state version ${STATE_VERSION + 1} (key ${versionKey()}); ` +
          `this worker is version ${STATE_VERSION}: run workers of one version on one Redis`,
      );
      expect(stderr).not.toMatch(/\n\s+at /);
      expect(await queues.batches.getJobCounts('waiting', 'active', 'failed')).toEqual({
        waiting: 1,
        active: 0,
        failed: 0,
      });
      // The stamp is the other version's still: a refused worker changes nothing.
      expect(await h.rt.redis.get(versionKey())).toBe(String(STATE_VERSION + 1));
    } finally {
      await queues.batches.obliterate({ force: true });
      await queues.close();
    }
  });
});
