import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { enqueueRun } from '../../src/queue/enqueue-run.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { killChildren } from '../helpers/cli-process.ts';

const CLI = path.resolve(import.meta.dirname, '../../src/cli.ts');
/** Rows of the SIGINT test. */
const ROWS = 8000;

function startWorker(env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, [CLI, 'worker', '--concurrency', '3', '--no-schedules'], {
    env: { ...process.env, ...env, ROWBRIDGE_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.resume();
  return child;
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('crash safety', () => {
  let h: Harness | undefined;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    killChildren(children);
    await h?.close();
    h = undefined;
  });

  it('a worker killed with SIGKILL mid-run and restarted finishes with every row landed exactly once', async () => {
    // Slow answers so the kill lands while batches are in flight.
    h = await createHarness(
      'crash',
      { faults: { seed: 3, latencyMs: [15, 30] } },
      { ROWBRIDGE_LOCK_DURATION_MS: '3000' },
    );
    const ws = h.createWorksheet({
      name: 'Ledger',
      alias: 'ledger',
      fields: [
        { name: 'Entry', alias: 'entry', type: '2', required: true, isTitle: true },
        { name: 'Amount', alias: 'amount', type: '6' },
      ],
    });
    const lines = ['entry,amount', ...Array.from({ length: 3000 }, (_, i) => `L-${i},${i}`)];
    await h.writeFile('ledger.csv', `${lines.join('\n')}\n`);
    await h.writeJob(
      'ledger',
      `name: ledger
source: { type: csv, path: ./ledger.csv }
target: { worksheet: ledger, mode: upsert, key: entry, batchSize: 50 }
fields: { entry: entry, amount: amount }
`,
    );
    const runId = await enqueueRun(h.rt, 'ledger', { trigger: 'enqueue' });
    const first = startWorker(h.env);
    children.push(first);
    await until(() => h!.emulator.state.rowCount(ws) >= 600, 60_000, 'the first rows to land');
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const landedAtKill = h.emulator.state.rowCount(ws);
    expect(landedAtKill).toBeLessThan(3000);

    const second = startWorker(h.env);
    children.push(second);
    const { record, report } = await h.waitForRun(runId, 120_000);
    expect(record.status).toBe('completed');
    const keys = h.emulator.state.rows(ws).map((r) => String(r.values.entry));
    expect(keys).toHaveLength(3000);
    expect(new Set(keys).size).toBe(3000);
    expect(report.deadLetteredTotal).toBe(0);
    expect(report.created).toBe(3000);

    second.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => second.once('exit', (c) => r(c)));
    expect(code).toBe(0);
  }, 180_000);

  it('run interrupted with SIGINT exits 130 in time; run again finishes it exactly once, in its process', async () => {
    h = await createHarness(
      'interrupt',
      { faults: { seed: 5, latencyMs: [10, 20] } },
      { ROWBRIDGE_LOCK_DURATION_MS: '2000' },
    );
    const ws = h.createWorksheet({
      name: 'Notes',
      alias: 'notes',
      fields: [{ name: 'Note', alias: 'note', type: '2', required: true, isTitle: true }],
    });
    // Far more rows than the batch jobs in flight hold (4 jobs of 250 rows at batchSize
    // 25), so the interrupt leaves some for the worker.
    await h.writeFile('notes.csv', `note\n${Array.from({ length: ROWS }, (_, i) => `N-${i}`).join('\n')}\n`);
    await h.writeJob(
      'notes',
      `name: notes
source: { type: csv, path: ./notes.csv }
target: { worksheet: notes, mode: upsert, key: note, batchSize: 25 }
fields: { note: note }
`,
    );
    const child = spawn(process.execPath, [CLI, 'run', 'notes'], {
      env: { ...process.env, ...h.env, ROWBRIDGE_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await until(() => h!.emulator.state.rowCount(ws) >= 200, 60_000, 'the first rows to land');
    child.kill('SIGINT');
    const code = await new Promise<number | null | 'hung'>((r) => {
      const timer = setTimeout(() => r('hung'), 45_000);
      child.once('exit', (c) => {
        clearTimeout(timer);
        r(c);
      });
    });
    expect(code, `run did not exit after SIGINT; stderr: ${stderr}`).toBe(130);
    expect(stderr).toMatch(/interrupted: .*the run stays resumable/);
    expect(h.emulator.state.rowCount(ws)).toBeLessThan(ROWS);

    // A worker up meanwhile takes nothing of it: the run lives in run's own queues.
    h.startWorkers();
    const [run] = await h.rt.runs.list({ job: 'notes', limit: 1 });
    const again = spawn(process.execPath, [CLI, 'run', 'notes'], {
      env: { ...process.env, ...h.env, ROWBRIDGE_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    children.push(again);
    expect(await new Promise((r) => again.once('exit', r))).toBe(0);
    const { record, report } = await h.waitForRun(run!.runId, 120_000);
    expect(record.status).toBe('completed');
    const keys = h.emulator.state.rows(ws).map((r) => String(r.values.note));
    expect(keys).toHaveLength(ROWS);
    expect(new Set(keys).size).toBe(ROWS);
    expect(report.created).toBe(ROWS);
  }, 180_000);
});
