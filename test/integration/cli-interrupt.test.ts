/**
 * Ctrl-C on `rowbridge run` as a user presses it: no stack, the shutdown wait counted
 * down, exit 130 once what was held is handed back, and the run resumable.
 */
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { killChildren, spawnCli, until, writeLedgerJob } from '../helpers/cli-process.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

describe('Ctrl-C on run', { timeout: 120_000 }, () => {
  let h: Harness | undefined;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    killChildren(children);
    await h?.close();
    h = undefined;
  });

  it('counts down the wait for the batch in flight, prints no stack, exits 130; the run resumes', async () => {
    // Each write takes 3 s: a batch is in flight when Ctrl-C comes.
    h = await createHarness('cli-interrupt', {
      faults: { seed: 3, latencyMs: [3000, 3000], writesOnly: true },
    });
    const ws = await writeLedgerJob(h, 200, 'upsert');
    const isWrite = (r: { method: string; path: string }) =>
      r.method !== 'GET' && r.path.endsWith('/rows/batch');
    const run = spawnCli(h, children, ['run', 'ledger'], {
      ROWBRIDGE_LOG_LEVEL: 'info',
      ROWBRIDGE_SHUTDOWN_TIMEOUT_MS: '20000',
    });
    await until(() => h!.emulator.requests.some(isWrite), 30_000, 'a batch write to reach the platform');
    run.child.kill('SIGINT');
    const first = await run.exited;
    expect(first.code, first.stderr + first.stdout).toBe(130);
    expect(first.stderr).toMatch(/stopping: waiting for the batches in flight to hand back, \d+ s left/);
    expect(first.stderr).toMatch(
      /interrupted: .*the run stays resumable; `node src\/cli\.ts run` of the job resumes it/,
    );
    expect(first.stderr).not.toMatch(/\n\s+at |"stack"/);
    const again = await spawnCli(h, children, ['run', 'ledger']).exited;
    expect(again.code, again.stderr).toBe(0);
    expect(h.emulator.state.rowCount(ws)).toBe(200);
  });
});
