import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../config/settings.ts';
import { createLogger } from '../../src/ground/logger.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { createWorkers } from '../../src/queue/create-workers.ts';
import type { Workers } from '../../src/queue/create-workers.ts';
import { enqueueRun } from '../../src/queue/enqueue-run.ts';
import { createQueues } from '../../src/queue/queues.ts';
import type { BatchJobData } from '../../src/queue/queues.ts';
import { createRuntime } from '../../src/cli/create-runtime.ts';
import { batchRowIndexes } from '../../src/sync/batch/batch-job-rows.ts';
import type { Runtime } from '../../src/queue/runtime-types.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const CLI = path.resolve(import.meta.dirname, '../../src/cli.ts');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** rowbridge_rows_total by label set, read from the registry. */
async function rowsByOutcome(metrics: Metrics): Promise<Record<string, number>> {
  const metric = metrics.registry.getSingleMetric('rowbridge_rows_total');
  const out: Record<string, number> = {};
  for (const v of (await metric!.get()).values) {
    const { outcome, category } = v.labels;
    out[category === undefined ? String(outcome) : `${outcome}:${category}`] = v.value;
  }
  return out;
}

/**
 * Issue 13.5: rows by outcome are counted as batches record them, through the runtime's
 * `onRowOutcomes` (as `worker` wires it), and a batch worked twice is counted once.
 */
describe('live row metrics', () => {
  let h: Harness;
  let rt: Runtime;
  let workers: Workers;
  const metrics = createMetrics(undefined, { defaultMetrics: false });

  beforeAll(async () => {
    // Slow writes: the worker cannot run through every batch before the test pauses it.
    h = await createHarness('ops-live', { faults: { seed: 1, latencyMs: [150, 150], writesOnly: true } });
    rt = createRuntime({
      settings: loadSettings(h.env),
      env: h.env,
      logger: createLogger({ level: 'silent' }),
      jobsDir: h.dir,
      onRowOutcomes: (moved) => metrics.onRowOutcomes(moved),
    });
    h.createWorksheet({
      name: 'Orders',
      alias: 'orders',
      fields: [
        { name: 'No', alias: 'no', type: 'Text', required: true, isTitle: true },
        { name: 'Amount', alias: 'amount', type: 'Number' },
      ],
    });
    const rows = Array.from(
      { length: 40 },
      (_, i) => `A-${i + 1},${i === 1 ? 'two' : i === 5 ? 'six' : i + 1}`,
    );
    await h.writeFile('orders.csv', `no,amount\n${rows.join('\n')}\n`);
    await h.writeJob(
      'orders',
      `name: orders
source: { type: csv, path: ./orders.csv }
target: { worksheet: orders, mode: upsert, key: no, batchSize: 1 }
fields: { no: no, amount: amount }
`,
    );
  });
  afterAll(async () => {
    await workers?.close();
    await metrics.close();
    await rt?.close();
    await h?.close();
  });

  it('counts the rows of a batch when it finishes, before the run ends, and a batch worked again adds nothing', async () => {
    workers = createWorkers(rt, { concurrency: 1, closeTimeoutMs: 10_000 });
    // The first batch to finish pauses the batch worker: the run cannot end meanwhile.
    let first: BatchJobData | undefined;
    const paused = new Promise<void>((resolve) => {
      workers.batchWorker.on('completed', (job) => {
        if (first !== undefined) return;
        first = job.data;
        // The queue stops handing out batches at once; the worker then waits for its own.
        const queues = createQueues(rt);
        void queues.batches
          .pause()
          .then(() => queues.close())
          .then(() => workers.batchWorker.pause())
          .then(resolve);
      });
    });
    const runId = await enqueueRun(rt, 'orders', { trigger: 'cli' });
    await paused;
    // Nothing is active now (pause waited for it): what Redis holds is what was counted.
    expect((await rt.runs.get(runId))?.status).not.toBe('completed');
    const midway = await rowsByOutcome(metrics);
    const recorded = await rt.runs.getOutcomes(
      runId,
      Array.from({ length: 40 }, (_, i) => i),
    );
    expect(midway.created).toBeGreaterThanOrEqual(batchRowIndexes(first!)!.length);
    expect(midway.created).toBe([...recorded.values()].filter((o) => o === 'created').length);
    expect(midway.created).toBeLessThan(38);
    // Mapping failures are recorded while the run reads, before any batch.
    expect(midway['dead_lettered:invalid-row']).toBe(2);

    // The same batch again, as BullMQ retries it or a re-read run adds it anew: its
    // outcomes are recorded already, so it must count nothing.
    const queues = createQueues(rt);
    // lifo: worked first when the queue resumes, while the run still has batches to go.
    await queues.batches.add('batch', first!, { jobId: `${runId}-again`, lifo: true });
    await workers.batchWorker.resume();
    const resumed = createQueues(rt);
    await resumed.batches.resume();
    await resumed.close();
    const { record, report } = await h.waitForRun(runId);
    expect(record.status).toBe('completed');
    const again = await queues.batches.getJob(`${runId}-again`);
    await queues.close();
    expect(again?.returnvalue).toMatchObject({ outcomes: { created: batchRowIndexes(first!)!.length } });
    expect(again?.returnvalue).not.toHaveProperty('skippedBecauseRunStopped');
    expect(report).toMatchObject({ created: 38, deadLetteredTotal: 2 });
    expect(await rowsByOutcome(metrics)).toEqual({ created: 38, 'dead_lettered:invalid-row': 2 });

    // The run's end adds no rows again (only what a finalizer does: deletes, resolutions).
    metrics.observeRun(record, report);
    expect(await rowsByOutcome(metrics)).toEqual({ created: 38, 'dead_lettered:invalid-row': 2 });
    await workers.close();
  }, 60_000);

  it('`worker --ops-port` counts the rows of the runs it works, once each', async () => {
    await h.writeFile('more.csv', 'no,amount\nB-1,1\nB-2,2\nB-3,three\n');
    await h.writeJob(
      'more',
      `name: more
source: { type: csv, path: ./more.csv }
target: { worksheet: orders, mode: upsert, key: no }
fields: { no: no, amount: amount }
`,
    );
    const port = await freePort();
    const child = spawn(process.execPath, [CLI, 'worker', '--ops-port', String(port), '--no-schedules'], {
      env: { ...process.env, ...h.env, ROWBRIDGE_LOG_LEVEL: 'warn' },
      stdio: 'ignore',
    });
    try {
      const runId = await enqueueRun(rt, 'more', { trigger: 'enqueue' });
      const { report } = await h.waitForRun(runId);
      expect(report).toMatchObject({ created: 2, deadLetteredTotal: 1 });
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(text).toContain('rowbridge_rows_total{outcome="created"} 2\n');
      expect(text).toContain('rowbridge_rows_total{outcome="dead_lettered",category="invalid-row"} 1\n');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await new Promise<number | null>((r) => child.once('exit', (c) => r(c)))).toBe(0);
  }, 60_000);
});
