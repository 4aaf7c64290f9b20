import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../config/settings.ts';
import type { CreateWorksheetInput } from '../../src/api/types.ts';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import type { EmulatorHandle } from '../../src/emulator/start-emulator.ts';
import { createLogger } from '../../src/ground/logger.ts';
import { enqueueRun } from '../../src/queue/enqueue-run.ts';
import { BATCH_QUEUE } from '../../src/queue/queues.ts';
import { createRuntime } from '../../src/cli/create-runtime.ts';
import type { Runtime } from '../../src/queue/runtime-types.ts';
import { TERMINAL_STATUSES } from '../../src/sync/state/run-store.ts';
import { startCountingProxy } from './fixtures/scale-out-proxy.ts';
import type { CountingProxy } from './fixtures/scale-out-proxy.ts';
import { deleteKeys, REDIS_URL } from '../helpers/sync-harness.ts';

/**
 * Two `rowbridge worker` OS processes on one Redis work one run of the quickstart's
 * 3,000 orders. Each reaches the emulator through its own counting proxy, so the test
 * sees which process sent what; both use the same credential, so they share one budget.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const QUICKSTART = path.join(ROOT, 'jobs/examples/quickstart');
const PREFIX = `rbtest-scaleout-${process.pid}`;
/** The emulator's limit per credential; rowbridge's shared budget is set below it. */
const PLATFORM_RATE = 20;
const BUDGET = 15;

const workers: ChildProcess[] = [];
const cleanups: Array<() => Promise<void>> = [];

afterAll(async () => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
  for (const cleanup of cleanups.reverse()) await cleanup();
  await deleteKeys(`${PREFIX}:*`);
});

function spawnWorker(env: NodeJS.ProcessEnv): {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
} {
  const child = spawn(process.execPath, [path.join(ROOT, 'src/cli.ts'), 'worker', '--concurrency', '2'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  workers.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exit };
}

async function until(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  context: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms\n${context()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('scale-out: two worker processes on one Redis', () => {
  it('share one run and one rate budget, write every row exactly once, and stop cleanly on SIGTERM', async () => {
    const emulator: EmulatorHandle = await startEmulator({
      rateLimit: { requestsPerSecond: PLATFORM_RATE, burst: 5 },
    });
    cleanups.push(() => emulator.close());
    const app = emulator.createApp({ name: 'Scale-out' });
    const structure = JSON.parse(
      await readFile(path.join(QUICKSTART, 'worksheet.json'), 'utf8'),
    ) as CreateWorksheetInput;
    const worksheetId = emulator.createWorksheet(app.appId, structure).id;
    const proxies: CountingProxy[] = [
      await startCountingProxy(emulator.url),
      await startCountingProxy(emulator.url),
    ];
    cleanups.push(async () => {
      for (const p of proxies) await p.close();
    });

    const dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-scaleout-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const job = (await readFile(path.join(QUICKSTART, 'orders.yaml'), 'utf8'))
      .replace('path: ./orders.csv', `path: ${JSON.stringify(path.join(QUICKSTART, 'orders.csv'))}`)
      .replace('batchSize: 100', 'batchSize: 50');
    expect(job).toContain('batchSize: 50');
    await writeFile(path.join(dir, 'orders.yaml'), job);

    const env: NodeJS.ProcessEnv = {
      REDIS_URL,
      ROWBRIDGE_QUEUE_PREFIX: PREFIX,
      ROWBRIDGE_APPKEY: app.appKey,
      ROWBRIDGE_SIGN: app.sign,
      ROWBRIDGE_HEADER_PREFIX: (emulator as { headerPrefix?: string }).headerPrefix ?? 'APP-',
      ROWBRIDGE_JOBS_DIR: dir,
      ROWBRIDGE_RATE: String(BUDGET),
      ROWBRIDGE_MAX_RATE: String(BUDGET),
      ROWBRIDGE_LOG_LEVEL: 'warn',
    };
    const procs = proxies.map((p) => spawnWorker({ ...env, ROWBRIDGE_API_URL: p.url }));
    const logs = () => procs.map((p, i) => `--- worker ${i + 1}:\n${p.output()}`).join('\n');

    const rt: Runtime = createRuntime({
      settings: loadSettings({ ...env, ROWBRIDGE_API_URL: emulator.url }),
      env: { ...env, ROWBRIDGE_API_URL: emulator.url },
      logger: createLogger({ level: 'silent' }),
      jobsDir: dir,
    });
    cleanups.push(() => rt.close());
    // Both processes must be taking batches before the run starts, or the first one up could do it all.
    const batches = new Queue(BATCH_QUEUE, { connection: rt.connection, prefix: PREFIX });
    cleanups.push(() => batches.close());
    await until(
      'two batch workers connected',
      async () => (await batches.getWorkersCount()) >= 2,
      30_000,
      logs,
    );

    const runId = await enqueueRun(rt, 'orders', { trigger: 'enqueue' });
    await until(
      'the run finished',
      async () => TERMINAL_STATUSES.has((await rt.runs.get(runId))?.status ?? 'queued'),
      120_000,
      logs,
    );
    const record = await rt.runs.get(runId);
    const report = await rt.runs.report(runId);
    expect(record?.status).toBe('completed');
    // Batch jobs of ten platform batches (src/sync/batch/batch-job-size.ts): 500 rows each.
    expect(report).toMatchObject({ read: 3000, created: 2995, deadLetteredTotal: 5, batches: 6 });

    // Every good order exactly once.
    const bad = new Set(
      (
        JSON.parse(await readFile(path.join(QUICKSTART, 'bad-rows.json'), 'utf8')) as Array<{
          orderNo: string;
        }>
      ).map((b) => b.orderNo),
    );
    const expected = Array.from({ length: 3000 }, (_, i) => `SO-${100001 + i}`).filter((o) => !bad.has(o));
    const landed = emulator.state.rows(worksheetId).map((r) => String(r.values.order_no));
    expect(landed).toHaveLength(2995);
    expect(new Set(landed).size).toBe(2995);
    expect([...landed].sort()).toEqual(expected);

    // Both processes wrote batches (batch creates went through both proxies).
    const creates = proxies.map(
      (p) => p.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/rows/batch')).length,
    );
    expect(creates[0]).toBeGreaterThan(0);
    expect(creates[1]).toBeGreaterThan(0);
    expect(creates[0]! + creates[1]!).toBe(
      emulator.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/rows/batch')).length,
    );

    // One budget: together they stayed under the platform's limit, so it rarely had to say 51.
    // Two budgets of 15/s would arrive at up to 30/s against 20/s and meet 51 on about a third.
    const all = proxies.flatMap((p) => p.requests.map((r) => r.at)).sort((a, b) => a - b);
    const throttled = emulator.requests.filter((r) => r.errorCode === 51).length;
    expect(all.length).toBe(emulator.requests.length);
    expect(throttled).toBeLessThanOrEqual(Math.max(2, all.length * 0.05));
    // The combined arrival rate is bounded by the budget (its 200 ms bucket of burst included).
    const seconds = (all.at(-1)! - all[0]!) / 1000;
    expect(all.length).toBeLessThanOrEqual(BUDGET * seconds * 1.1 + BUDGET * 0.2 + 2);

    for (const p of procs) p.child.kill('SIGTERM');
    let guard: NodeJS.Timeout | undefined;
    const codes = await Promise.race([
      Promise.all(procs.map((p) => p.exit)),
      new Promise<'late'>((resolve) => (guard = setTimeout(() => resolve('late'), 30_000))),
    ]);
    clearTimeout(guard);
    expect(codes, logs()).toEqual([0, 0]);
  }, 180_000);
});
