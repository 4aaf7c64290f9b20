/**
 * README, "When a run does not finish": a run begun by the version before the byte-per-row
 * ledger (one hash field per row, key `:outcomes`) resumes under this one, from the CLI,
 * and every row lands once. The older version's state is made the faithful way: a real
 * run killed at 40%, its ledger rewritten as that version kept it.
 */
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { killChildren, spawnCli, until, writeLedgerJob } from '../helpers/cli-process.ts';
import { createHarness, REDIS_URL } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

describe('a run begun by the previous version', { timeout: 150_000 }, () => {
  let h: Harness | undefined;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    killChildren(children);
    await h?.close();
    h = undefined;
  });

  it('killed at 40%, its outcomes in a field per row: `run JOB` resumes it, every row once, counted once', async () => {
    h = await createHarness(
      'run-upgrade',
      { faults: { seed: 5, latencyMs: [10, 20] } },
      { ROWBRIDGE_LOCK_DURATION_MS: '600000' },
    );
    const ws = await writeLedgerJob(h, 2500, 'upsert');
    const first = spawnCli(h, children, ['run', 'ledger']);
    await until(() => h!.emulator.state.rowCount(ws) >= 1000, 60_000, '40% of the rows');
    first.child.kill('SIGKILL');
    await first.exited;
    const [killed] = await h.rt.runs.list({ job: 'ledger' });
    const runId = killed!.runId;
    const indexes = Array.from({ length: 2500 }, (_, i) => i);
    const before = await h.rt.runs.getOutcomes(runId, indexes);
    const created = [...before.values()].filter((o) => o === 'created').length;
    expect(created).toBeGreaterThanOrEqual(900);
    expect(created).toBeLessThan(2500);

    // What the previous version kept: a hash field per row, no byte-per-row ledger.
    const redis = new Redis(REDIS_URL);
    try {
      const legacy = `${h.prefix}:rb:run:${runId}:outcomes`;
      const fields = [...before].flatMap(([index, outcome]) => [String(index), outcome]);
      await redis.hset(legacy, ...fields);
      expect(await redis.del(`${h.prefix}:rb:run:${runId}:ledger`)).toBe(1);
      expect(await redis.hlen(legacy)).toBe(before.size);

      const second = await spawnCli(h, children, ['run', 'ledger', '--json']).exited;
      expect(second.code, second.stderr).toBe(0);
      expect(second.stderr).toContain(`resuming run ${runId}`);
      const { run, report } = JSON.parse(second.stdout) as {
        run: { runId: string; status: string };
        report: { created: number; updated: number; unchanged: number };
      };
      expect(run).toMatchObject({ runId, status: 'completed' });
      const entries = h.emulator.state.rows(ws).map((r) => String(r.values.entry));
      expect(entries).toHaveLength(2500);
      expect(new Set(entries).size).toBe(2500);
      // Rows the first process created were counted then, and not again; none was read
      // again as unchanged (what a resume blind to the old outcomes would report).
      expect(report.created).toBe(2500);
      expect(report.unchanged).toBe(0);
      expect(report.updated).toBe(0);
      // The finished run's row state is gone in both forms.
      expect(await redis.exists(legacy, `${h.prefix}:rb:run:${runId}:ledger`)).toBe(0);
    } finally {
      await redis.quit();
    }
  });
});
