import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadSettings } from '../../config/settings.ts';
import type { CreateWorksheetInput } from '../../src/api/types.ts';
import { parseSeed } from '../../src/emulator/seed-schema.ts';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import type { EmulatorHandle } from '../../src/emulator/start-emulator.ts';
import { commands } from '../../src/cli/commands.ts';
import { createLogger } from '../../src/ground/logger.ts';
import { enqueueRun } from '../../src/queue/enqueue-run.ts';
import { BATCH_QUEUE } from '../../src/queue/queues.ts';
import { createRuntime } from '../../src/queue/runtime.ts';
import type { Runtime } from '../../src/queue/runtime.ts';
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
    expect(report).toMatchObject({ read: 3000, created: 2995, deadLetteredTotal: 5, batches: 60 });

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
    const codes = await Promise.race([
      Promise.all(procs.map((p) => p.exit)),
      new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 30_000)),
    ]);
    expect(codes, logs()).toEqual([0, 0]);
  }, 180_000);
});

interface ComposeService {
  image?: string;
  command?: string[];
  profiles?: string[];
  ports?: string[];
  container_name?: string;
  environment?: Record<string, string>;
  healthcheck?: { test?: string[]; disable?: boolean };
  depends_on?: Record<string, { condition: string }>;
}

describe('scale-out with Docker: compose.yaml and Dockerfile', () => {
  const read = (file: string) => readFile(path.join(ROOT, file), 'utf8');

  it('compose.yaml: redis with AOF and noeviction, scalable workers, the dashboard, the emulator demo profile', async () => {
    const compose = parse(await read('compose.yaml'), { merge: true }) as {
      services: Record<string, ComposeService>;
    };
    const { redis, worker, dashboard, emulator, demo } = compose.services;
    expect(redis?.command).toEqual([
      'redis-server',
      '--appendonly',
      'yes',
      '--maxmemory-policy',
      'noeviction',
    ]);
    expect(redis?.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
    for (const [name, service] of Object.entries({ worker, dashboard })) {
      expect(service?.profiles, name).toBeUndefined();
      expect(service?.depends_on?.redis?.condition, name).toBe('service_healthy');
      expect(service?.environment?.REDIS_URL, name).toBe('${REDIS_URL:-redis://redis:6379}');
    }
    // `--scale worker=3` fails with a fixed container name or host port.
    expect(worker?.container_name).toBeUndefined();
    expect(worker?.ports).toBeUndefined();
    expect(worker?.command).toEqual([
      'node',
      'src/cli.ts',
      'worker',
      '--ops-port',
      '9464',
      '--host',
      '0.0.0.0',
    ]);
    expect(dashboard?.ports).toEqual(['127.0.0.1:${DASHBOARD_PORT:-3000}:3000']);
    expect(dashboard?.healthcheck?.test?.[0]).toBe('CMD');
    expect(emulator?.profiles).toEqual(['demo']);
    expect(demo?.profiles).toEqual(['demo']);
    expect(demo?.depends_on?.emulator?.condition).toBe('service_healthy');
    // Every command the services run exists in the CLI.
    for (const service of Object.values(compose.services)) {
      if (service.command?.[1] === 'src/cli.ts') expect(Object.keys(commands)).toContain(service.command[2]);
    }

    // The demo's credentials open the app of the seed the emulator loads, whose worksheet is the quickstart's.
    const seedFile = emulator?.command?.[emulator.command.indexOf('--seed') + 1] ?? '';
    const seed = parseSeed(JSON.parse(await read(seedFile)), seedFile);
    expect(seed.apps[0]).toMatchObject({
      appKey: demo?.environment?.ROWBRIDGE_APPKEY,
      sign: demo?.environment?.ROWBRIDGE_SIGN,
    });
    expect(seed.apps[0]?.worksheets?.[0]).toEqual(
      JSON.parse(await read('jobs/examples/quickstart/worksheet.json')),
    );
    expect(demo?.command).toEqual(['node', 'src/cli.ts', 'run', 'jobs/examples/quickstart/orders.yaml']);
    expect(demo?.environment?.ROWBRIDGE_QUEUE_PREFIX).toMatch(/\{.+\}/);
  });

  it('Dockerfile: multi-stage on node:24-slim, production dependencies, non-root, healthcheck, worker command', async () => {
    const lines = (await read('Dockerfile')).split('\n').filter((l) => !l.startsWith('#'));
    const text = lines.join('\n');
    expect(lines.filter((l) => l.startsWith('FROM '))).toEqual([
      'FROM node:24-slim AS deps',
      'FROM node:24-slim',
    ]);
    expect(text).toContain('RUN npm ci --omit=dev');
    const at = (prefix: string) => lines.findIndex((l) => l.startsWith(prefix));
    expect(at('USER node')).toBeGreaterThan(at('COPY src'));
    expect(at('USER node')).toBeLessThan(at('CMD '));
    expect(text).toMatch(/HEALTHCHECK .*\n.*process\.env\.OPS_PORT \|\| 9464\) \+ '\/healthz'/);
    expect(lines.find((l) => l.startsWith('CMD '))).toBe(
      'CMD ["node", "src/cli.ts", "worker", "--ops-port", "9464", "--host", "0.0.0.0"]',
    );
    // What the image copies must not be ignored; secrets and local tooling must be.
    const ignored = (await read('.dockerignore')).split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    for (const needed of ['package.json', 'package-lock.json', 'config', 'src', 'jobs'])
      expect(ignored).not.toContain(needed);
    for (const kept of ['.env', '.env.*', 'node_modules', '.git', '.tools']) expect(ignored).toContain(kept);
  });
});
