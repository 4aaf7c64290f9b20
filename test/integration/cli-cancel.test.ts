/**
 * `rowbridge cancel RUN` stops a run another process is working, cleanly: it stays
 * resumable (and `run JOB` then writes every row once), or with --abandon is given up.
 */
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { killChildren, spawnCli, until, writeLedgerJob } from '../helpers/cli-process.ts';
import type { CliProcess } from '../helpers/cli-process.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/** Four batch jobs of 500 rows (batchSize 50), worked one at a time. */
const ROWS = 2000;

describe('cancel', { timeout: 120_000 }, () => {
  let h: Harness | undefined;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    killChildren(children);
    await h?.close();
    h = undefined;
  });

  /** `run ledger` with slow writes, once its first rows landed: the command and its run id. */
  async function runningLedger(name: string): Promise<{ ws: string; run: CliProcess; runId: string }> {
    h = await createHarness(name, { faults: { seed: 2, latencyMs: [300, 300], writesOnly: true } });
    const ws = await writeLedgerJob(h, ROWS, 'upsert');
    const run = spawnCli(h, children, ['run', 'ledger', '--concurrency', '1']);
    await until(() => h!.emulator.state.rowCount(ws) >= 50, 60_000, 'the first rows').catch((err: Error) => {
      throw new Error(`${err.message}: ${run.stderr()}`);
    });
    const [record] = await h.rt.runs.list({ job: 'ledger' });
    return { ws, run, runId: record!.runId };
  }

  function entries(ws: string): string[] {
    return h!.emulator.state.rows(ws).map((r) => String(r.values.entry));
  }

  it('stops a running run; it stays resumable and run JOB then writes every row once', async () => {
    const { ws, run, runId } = await runningLedger('cancel');
    const cancel = await spawnCli(h!, children, ['cancel', runId]).exited;
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout).toBe(
      `run ${runId} (ledger) cancelled; it stays resumable: \`node src/cli.ts run ledger\` resumes it ` +
        `(\`--fresh\` or \`node src/cli.ts cancel ${runId} --abandon\` gives it up)\n`,
    );
    const stopped = await run.exited;
    expect(stopped.code, stopped.stderr).toBe(1);
    expect(stopped.stdout).toContain(
      `run ${runId} (ledger): failed - cancelled by \`node src/cli.ts cancel\``,
    );
    expect(entries(ws).length).toBeLessThan(ROWS);
    expect(await h!.rt.runs.resumableRun('ledger')).toBe(runId);

    const again = await spawnCli(h!, children, ['run', 'ledger']).exited;
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`resuming run ${runId}`);
    expect(entries(ws)).toHaveLength(ROWS);
    expect(new Set(entries(ws)).size).toBe(ROWS);
  });

  it('--abandon gives the run up: the next run starts anew', async () => {
    const { ws, run, runId } = await runningLedger('cancel-abandon');
    const cancel = await spawnCli(h!, children, ['cancel', runId, '--abandon']).exited;
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout).toBe(
      `run ${runId} (ledger) abandoned; it will not be resumed: the next run of the job starts anew\n`,
    );
    expect((await run.exited).code).toBe(1);
    expect(await h!.rt.runs.resumableRun('ledger')).toBeUndefined();
    const again = await spawnCli(h!, children, ['run', 'ledger']).exited;
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('resuming');
    expect(new Set(entries(ws)).size).toBe(ROWS);
    expect(entries(ws)).toHaveLength(ROWS);
  });

  it('an unknown run, or one that finished, is said so: exit 1', async () => {
    h = await createHarness('cancel-unknown');
    const unknown = await spawnCli(h, children, ['cancel', 'ledger-0']).exited;
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('no run ledger-0 (`node src/cli.ts status` lists the latest runs)\n');
  });
});
