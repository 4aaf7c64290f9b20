/**
 * `run JOB` works its run in its own process, with its own environment, while workers
 * are up: their credentials never write its rows, and a job a worker is working is
 * left to it (exit 75).
 */
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { enqueueRun } from '../../src/queue/enqueue-run.ts';
import { createQueues } from '../../src/queue/queues.ts';
import { killChildren, spawnCli, until, writeLedgerJob } from '../helpers/cli-process.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

describe('run works in this process', { timeout: 120_000 }, () => {
  let h: Harness | undefined;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    killChildren(children);
    await h?.close();
    h = undefined;
  });

  /** A `rowbridge worker` with `env`, once it listens to the run queue. */
  async function startWorker(env: NodeJS.ProcessEnv): Promise<void> {
    spawnCli(h!, children, ['worker', '--no-schedules'], env);
    const queues = createQueues(h!.rt);
    try {
      await until(async () => (await queues.runs.getWorkers()).length > 0, 30_000, 'the worker to listen');
    } finally {
      await queues.close();
    }
  }

  it('with a worker up whose credentials are wrong, run writes every row with its own', async () => {
    h = await createHarness('run-local');
    const ws = await writeLedgerJob(h, 120, 'upsert');
    await startWorker({ ROWBRIDGE_SIGN: 'not-the-sign' });
    const run = await spawnCli(h, children, ['run', 'ledger']).exited;
    expect(run.code, run.stderr).toBe(0);
    expect(h.emulator.state.rowCount(ws)).toBe(120);
    const [record] = await h.rt.runs.list({ job: 'ledger' });
    expect(record!.status).toBe('completed');
  });

  it('a job a worker is working: run says so and exits 75; the worker finishes it', async () => {
    h = await createHarness('run-local-busy', {
      faults: { seed: 4, latencyMs: [400, 400], writesOnly: true },
    });
    const ws = await writeLedgerJob(h, 300, 'upsert');
    await startWorker({});
    const runId = await enqueueRun(h.rt, 'ledger', { trigger: 'enqueue' });
    await until(async () => (await h!.rt.runs.get(runId))?.status === 'running', 30_000, 'the run to start');
    const run = await spawnCli(h, children, ['run', 'ledger']).exited;
    expect(run.code, run.stderr).toBe(75);
    expect(run.stderr).toBe(
      `a worker is working job ledger: run ${runId} (running); \`node src/cli.ts run\` never takes over a worker's run; see \`node src/cli.ts status ${runId}\`\n`,
    );
    const done = await h.waitForRun(runId, 60_000);
    expect(done.record.status).toBe('completed');
    expect(h.emulator.state.rowCount(ws)).toBe(300);
    expect((await h.rt.runs.list({ job: 'ledger' })).map((r) => r.runId)).toEqual([runId]);
  });
});
