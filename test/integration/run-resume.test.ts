/**
 * The failure paths of `run JOB` as a user walks them, from the CLI, counting rows at
 * the end: killed then run again, failed then fixed then run again, interrupted twice,
 * a damaged worksheet repaired with --full, --fresh, and a `run` that leaves other
 * jobs' runs to the workers.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { enqueueRun } from '../../src/queue/enqueue-run.ts';
import { killChildren, spawnCli, until, writeLedgerJob } from '../helpers/cli-process.ts';
import type { CliProcess } from '../helpers/cli-process.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

describe('run JOB resumes what did not finish', { timeout: 150_000 }, () => {
  let h: Harness | undefined;
  const children: ChildProcess[] = [];
  const servers: Server[] = [];
  afterEach(async () => {
    killChildren(children);
    for (const s of servers) s.closeAllConnections();
    for (const s of servers) await new Promise((r) => s.close(r));
    servers.length = 0;
    await h?.close();
    h = undefined;
  });

  /** `rowbridge ARGS` as a user types it. */
  function cli(args: string[], env: NodeJS.ProcessEnv = {}): CliProcess {
    return spawnCli(h!, children, args, env);
  }

  async function ledger(
    rows: number,
    mode: 'append' | 'upsert',
    latency: boolean | 'writes hang' = true,
  ): Promise<string> {
    const faults =
      latency === 'writes hang'
        ? { seed: 5, latencyMs: [600_000, 600_000] as [number, number], writesOnly: true }
        : { seed: 5, latencyMs: [10, 20] as [number, number] };
    h = await createHarness(
      `resume-${mode}`,
      latency === false ? {} : { faults },
      // Far longer than the test: only an immediate take-over lets the second run finish.
      { ROWBRIDGE_LOCK_DURATION_MS: '600000' },
    );
    return writeLedgerJob(h, rows, mode);
  }

  function entries(ws: string): string[] {
    return h!.emulator.state.rows(ws).map((r) => String(r.values.entry));
  }

  it('SIGKILL of run at 40%, then run again: the same run resumes, exit 0, every row exactly once', async () => {
    const ws = await ledger(2500, 'upsert');
    const first = cli(['run', 'ledger']);
    await until(() => h!.emulator.state.rowCount(ws) >= 1000, 60_000, '40% of the rows');
    first.child.kill('SIGKILL');
    await first.exited;
    const atKill = h!.emulator.state.rowCount(ws);
    expect(atKill).toBeLessThan(2500);
    const [killedRun] = await h!.rt.runs.list({ job: 'ledger' });
    const status = await cli(['status', '--job', 'ledger']).exited;
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`${killedRun!.runId}\\s+ledger\\s+running, resumable`));
    // Hints name the command as it was typed (issue 23 §4): here the entry file through node.
    expect(status.stdout).toContain('resumed by `node src/cli.ts run JOB`');

    const second = await cli(['run', 'ledger', '--json']).exited;
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain(`resuming run ${killedRun!.runId}`);
    const { run, report } = JSON.parse(second.stdout) as {
      run: { runId: string; status: string };
      report: { created: number };
    };
    expect(run.runId).toBe(killedRun!.runId);
    expect(run.status).toBe('completed');
    const keys = entries(ws);
    expect(keys).toHaveLength(2500);
    expect(new Set(keys).size).toBe(2500);
    expect(report.created).toBe(2500);
    expect(await h!.rt.runs.list({ job: 'ledger' })).toHaveLength(1);
  });

  it('a run stopped by the platform, fixed, then run again lands each row once (append)', async () => {
    const ws = await ledger(1500, 'append');
    const first = cli(['run', 'ledger']);
    await until(() => h!.emulator.state.rowCount(ws) >= 300, 60_000, 'the first rows');
    // The platform starts refusing this client's address (10000): the run stops.
    h!.emulator.setOptions({ ipAllowList: ['203.0.113.9'] });
    const failed = await first.exited;
    expect(failed.code, failed.stderr).toBe(1);
    const landed = h!.emulator.state.rowCount(ws);
    expect(landed).toBeLessThan(1500);
    const [stopped] = await h!.rt.runs.list({ job: 'ledger' });
    expect(stopped!.status).toBe('failed');
    expect(await h!.rt.runs.resumableRun('ledger')).toBe(stopped!.runId);

    h!.emulator.setOptions({ ipAllowList: undefined });
    const again = await cli(['run', 'ledger']).exited;
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`resuming run ${stopped!.runId}`);
    const keys = entries(ws);
    expect(keys).toHaveLength(1500);
    expect(new Set(keys).size).toBe(1500);
    expect((await h!.rt.runs.get(stopped!.runId))!.status).toBe('completed');
    expect(await h!.rt.runs.resumableRun('ledger')).toBeUndefined();
  });

  it('--fresh gives the unfinished run up and starts anew (upsert keeps every key once)', async () => {
    const ws = await ledger(1500, 'upsert');
    const first = cli(['run', 'ledger']);
    await until(() => h!.emulator.state.rowCount(ws) >= 300, 60_000, 'the first rows');
    first.child.kill('SIGKILL');
    await first.exited;
    const [killed] = await h!.rt.runs.list({ job: 'ledger' });

    const fresh = await cli(['run', 'ledger', '--fresh', '--json']).exited;
    expect(fresh.code, fresh.stderr).toBe(0);
    const { run } = JSON.parse(fresh.stdout) as { run: { runId: string } };
    expect(run.runId).not.toBe(killed!.runId);
    const old = await h!.rt.runs.get(killed!.runId);
    expect(old!.status).toBe('failed');
    expect(old!.message).toMatch(/abandoned/);
    expect(new Set(entries(ws)).size).toBe(1500);
    expect(entries(ws)).toHaveLength(1500);
  });

  it('run --full repairs a damaged worksheet that a plain re-run calls unchanged', async () => {
    const ws = await ledger(200, 'upsert', false);
    expect((await cli(['run', 'ledger']).exited).code).toBe(0);
    // Someone blanks Amount on every row in the worksheet itself.
    const amount = h!.emulator.state.worksheet(ws)!.fields.find((f) => f.alias === 'amount')!;
    const rowIds = h!.emulator.state.rows(ws).map((r) => r.id);
    await h!.rt.clientFor().rows.batchUpdate(ws, { rowIds, fields: [{ id: amount.id, value: '' }] });
    const plain = await cli(['run', 'ledger', '--json']).exited;
    expect(plain.code, plain.stderr).toBe(0);
    expect((JSON.parse(plain.stdout) as { report: { unchanged: number } }).report.unchanged).toBe(200);
    expect(h!.emulator.state.rows(ws).filter((r) => r.values.amount != null)).toHaveLength(0);

    const full = await cli(['run', 'ledger', '--full', '--json']).exited;
    expect(full.code, full.stderr).toBe(0);
    expect((JSON.parse(full.stdout) as { report: { updated: number } }).report.updated).toBe(200);
    const amounts = h!.emulator.state.rows(ws).map((r) => Number(r.values.amount));
    expect(amounts.sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });

  it('run JOB leaves the queued runs of other jobs to the workers', async () => {
    await ledger(100, 'upsert', false);
    await h!.writeFile('other.csv', 'entry,amount\nO-1,1\n');
    await h!.writeJob(
      'other',
      `name: other
source: { type: csv, path: ./other.csv }
target: { worksheet: ledger, mode: upsert, key: entry }
fields: { entry: entry, amount: amount }
`,
    );
    const queued = await enqueueRun(h!.rt, 'other', { trigger: 'enqueue' });
    const run = await cli(['run', 'ledger']).exited;
    expect(run.code, run.stderr).toBe(0);
    expect((await h!.rt.runs.get(queued))!.status).toBe('queued');
  });

  it('Ctrl-C on a run whose HTTP source hangs stops it: exit 130, the run resumable', async () => {
    await ledger(1, 'upsert', false);
    // An HTTP source that accepts the request and never answers.
    const hanging = createServer(() => undefined);
    servers.push(hanging);
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    const { port } = hanging.address() as { port: number };
    let asked = 0;
    hanging.on('request', () => (asked += 1));
    await h!.writeJob(
      'stuck',
      `name: stuck
source: { type: http, url: "http://127.0.0.1:${port}/items" }
target: { worksheet: ledger, mode: upsert, key: entry }
fields: { entry: entry }
`,
    );
    const once = cli(['run', 'stuck'], { ROWBRIDGE_SHUTDOWN_TIMEOUT_MS: '1500' });
    await until(() => asked >= 1, 30_000, 'the source to be asked');
    once.child.kill('SIGINT');
    const first = await once.exited;
    expect(first.code, first.stderr).toBe(130);
    expect(first.stderr).toMatch(/interrupted: .*the run stays resumable/);
    const [run] = await h!.rt.runs.list({ job: 'stuck' });
    expect(run!.status).not.toBe('completed');
  });

  it('Ctrl-C twice exits at once, while the first waits for a batch the platform never answers', async () => {
    // Every write is held by the platform for ten minutes: the first Ctrl-C waits for the
    // batch in flight (up to ROWBRIDGE_SHUTDOWN_TIMEOUT_MS), the second must not.
    const ws = await ledger(60, 'upsert', 'writes hang');
    const isWrite = (r: { method: string; path: string }) =>
      r.method !== 'GET' && r.path.endsWith('/rows/batch');
    const twice = cli(['run', 'ledger'], {
      ROWBRIDGE_LOG_LEVEL: 'info',
      ROWBRIDGE_SHUTDOWN_TIMEOUT_MS: '600000',
    });
    await until(() => h!.emulator.requests.some(isWrite), 30_000, 'a batch write to reach the platform');
    twice.child.kill('SIGINT');
    await until(() => twice.stderr().includes('stopping'), 10_000, 'the first Ctrl-C to be heard');
    // Still there: the first Ctrl-C is waiting for the batch.
    await new Promise((r) => setTimeout(r, 500));
    expect(twice.child.exitCode).toBeNull();
    const sentAt = performance.now();
    twice.child.kill('SIGINT');
    const second = await twice.exited;
    expect(second.code, second.stderr).toBe(130);
    expect(second.stderr).toMatch(/SIGINT again: exiting now/);
    expect(performance.now() - sentAt).toBeLessThan(5_000);
    // Nothing was answered, so nothing landed: the run is left for `run` to resume.
    expect(h!.emulator.state.rowCount(ws)).toBe(0);
  });
});
