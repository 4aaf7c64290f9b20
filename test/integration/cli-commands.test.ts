import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as dlqMain } from '../../src/cli/dlq.ts';
import { main as enqueueMain } from '../../src/cli/enqueue.ts';
import { main as planMain } from '../../src/cli/plan.ts';
import { main as runMain } from '../../src/cli/run.ts';
import { main as statusMain } from '../../src/cli/status.ts';
import { createQueues } from '../../src/queue/queues.ts';
import { registerSchedules } from '../../src/queue/schedules.ts';
import { captureIo } from '../helpers/capture-io.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const CLI = path.resolve(import.meta.dirname, '../../src/cli.ts');

/** A port nothing listens on right now (the OS picks it). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

describe('CLI commands: plan, run, enqueue, status, schedules', () => {
  let h: Harness;
  let ws: string;
  beforeAll(async () => {
    h = await createHarness('cli');
    ws = h.createWorksheet({
      name: 'Items',
      alias: 'items',
      fields: [
        { name: 'Sku', alias: 'sku', type: '2', required: true, isTitle: true },
        { name: 'Qty', alias: 'qty', type: '6' },
      ],
    });
    await h.writeFile('items.csv', 'sku,qty\nS-1,1\nS-2,2\nS-3,x\n');
    await h.writeJob(
      'items',
      `name: items
source: { type: csv, path: ./items.csv }
target: { worksheet: items, mode: upsert, key: sku, batchSize: 10 }
fields: { sku: sku, qty: qty }
schedule: "*/15 * * * *"
`,
    );
  });
  afterAll(async () => {
    await h.close();
  });

  it('plan counts exactly what a run would do and writes nothing', async () => {
    const io = captureIo(h.env);
    expect(await planMain(['items', '--json'], io)).toBe(0);
    const plan = JSON.parse(io.stdout.join('')) as Record<string, unknown>;
    expect(plan).toMatchObject({ read: 3, create: 2, update: 0, unchanged: 0, reject: 1 });
    expect(plan.apiCalls).toMatchObject({ batchCreates: 1 });
    expect(h.emulator.state.rowCount(ws)).toBe(0);
  });

  it('run exits 2 when rows were dead-lettered and prints the report; a re-run plans zero writes', async () => {
    const io = captureIo(h.env);
    expect(await runMain(['items'], io)).toBe(2);
    const text = io.stdout.join('\n');
    expect(text).toMatch(/created\s+2/);
    expect(text).toMatch(/dead-lettered\s+1 \(invalid-row 1\)/);
    expect(text).toMatch(/dlq list --run items-/);
    expect(h.emulator.state.rowCount(ws)).toBe(2);

    const planIo = captureIo(h.env);
    await planMain(['items', '--json'], planIo);
    expect(JSON.parse(planIo.stdout.join(''))).toMatchObject({ create: 0, update: 0, unchanged: 2 });
  });

  it('dlq list finds the dead letters a run left (same Redis, same prefix)', async () => {
    const io = captureIo(h.env);
    expect(await dlqMain(['list', '--json', '--job', 'items'], io)).toBe(0);
    const entries = JSON.parse(io.stdout.join('')) as Array<{ category: string; field?: string }>;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ category: 'invalid-row', field: 'qty' });
  });

  it('run exits 0 when every row landed, and 1 with a clear message for an unknown job', async () => {
    await h.writeFile('items.csv', 'sku,qty\nS-1,1\nS-2,5\n');
    const io = captureIo(h.env);
    expect(await runMain(['items', '--json'], io)).toBe(0);
    expect(JSON.parse(io.stdout.join(''))).toMatchObject({
      run: { status: 'completed' },
      report: { updated: 1, unchanged: 1 },
    });

    const bad = captureIo(h.env);
    expect(await runMain(['nope'], bad)).toBe(1);
    expect(bad.stderr.join('')).toMatch(/no job spec nope\.yaml/);
    expect(await runMain([], captureIo(h.env))).toBe(64);
  });

  it('enqueue queues a run for workers; status lists runs and shows one', async () => {
    const io = captureIo(h.env);
    expect(await enqueueMain(['items', '--json'], io)).toBe(0);
    const { runId } = JSON.parse(io.stdout.join('')) as { runId: string };
    const queued = captureIo(h.env);
    expect(await statusMain([runId, '--json'], queued)).toBe(0);
    expect(JSON.parse(queued.stdout.join(''))).toMatchObject({ run: { runId, status: 'queued' } });
    h.startWorkers();
    const { record } = await h.waitForRun(runId);
    expect(record.status).toBe('completed');
    const list = captureIo(h.env);
    expect(await statusMain([], list)).toBe(0);
    expect(list.stdout.join('\n')).toContain(runId);
    expect(await statusMain(['no-such-run'], captureIo(h.env))).toBe(1);
  });

  it('skips a run while another run of the job is live, and takes over from one whose queue job is gone', async () => {
    // A live holder: its queue job is waiting in the runs queue.
    const queues = createQueues(h.rt);
    await queues.runs.add(
      'run',
      { runId: 'items-live', job: 'items', trigger: 'enqueue' },
      { jobId: 'items-live', delay: 60_000 },
    );
    await h.rt.runs.create({
      runId: 'items-live',
      job: 'items',
      trigger: 'enqueue',
      status: 'running',
      queueJobId: 'items-live',
    });
    expect(await h.rt.runs.acquireJob('items', 'items-live')).toBeUndefined();
    const skipped = await h.runJob('items');
    expect(skipped.record).toMatchObject({
      status: 'skipped',
      message: 'run items-live of job items is still active',
    });

    // The same holder once BullMQ has lost its job: the next run fails it and proceeds.
    await (await queues.runs.getJob('items-live'))?.remove();
    await queues.close();
    const next = await h.runJob('items');
    expect(next.record.status).toBe('completed');
    expect(await h.rt.runs.get('items-live')).toMatchObject({ status: 'failed' });
  });

  it('registers one scheduler per scheduled job and removes stale ones', async () => {
    const first = await registerSchedules(h.rt);
    expect(first.registered).toEqual(['items']);
    // The schedule is taken out of the job: its scheduler goes too.
    await h.writeJob(
      'items',
      `name: items
source: { type: csv, path: ./items.csv }
target: { worksheet: items, mode: upsert, key: sku }
fields: { sku: sku, qty: qty }
`,
    );
    const second = await registerSchedules(h.rt);
    expect(second).toEqual({ registered: [], removed: ['items'] });
    const queues = createQueues(h.rt);
    expect(await queues.runs.getJobSchedulers()).toEqual([]);
    await queues.close();
  });

  it('worker --ops-port serves health and metrics, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [CLI, 'worker', '--ops-port', String(port), '--no-schedules'], {
      env: { ...process.env, ...h.env, ROWBRIDGE_LOG_LEVEL: 'warn' },
      stdio: 'ignore',
    });
    try {
      // Until it answers 200: on a loaded machine the first probe of Redis or the platform
      // can miss its timeout (503); one that never passes fails below.
      let health: Response | undefined;
      for (let i = 0; i < 150 && health?.status !== 200; i += 1) {
        health = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
        if (health?.status !== 200) {
          await health?.body?.cancel();
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      expect(health?.status).toBe(200);
      const body = await health!.text();
      expect(body).not.toContain(String(h.env.ROWBRIDGE_SIGN));
      // Ready once the workers are started, which on a loaded machine can come after health.
      let ready: number | undefined;
      for (let i = 0; i < 150 && ready !== 200; i += 1) {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`);
        await res.body?.cancel();
        ready = res.status;
        if (ready !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(ready).toBe(200);
      expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toMatch(/rowbridge_queue_jobs/);
    } finally {
      child.kill('SIGTERM');
    }
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).toBe(0);
  });
});
