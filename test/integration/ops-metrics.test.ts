import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFromEnv } from '../../src/api/credentials-from-env.ts';
import { createPlatformClient } from '../../src/api/create-platform-client.ts';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import { createRateLimiter } from '../../src/api/limiter/create-rate-limiter.ts';
import { resolveBaseUrl } from '../../src/api/transport.ts';
import { createReadiness } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import { createRunStore } from '../../src/sync/state/run-store.ts';
import type { RunRecord, RunReport } from '../../src/sync/state/run-store.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/** Samples of a Prometheus text exposition: `name{a="b"}` → value. */
function parseExposition(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    samples.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return samples;
}

/** Sum of the samples of one metric whose labels include every given pair. */
function sum(samples: Map<string, number>, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const [key, value] of samples) {
    if (key !== name && !key.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => key.includes(`${k}="${v}"`))) total += value;
  }
  return total;
}

/**
 * The runtime does not take an event hook yet: its clients are replaced by clients built
 * the same way whose onEvent feeds the metrics, as the runtime will once it forwards it.
 */
function instrumentClients(
  h: Harness,
  metrics: Metrics,
): { clients: Map<string, PlatformClient>; close(): Promise<void> } {
  const clients = new Map<string, PlatformClient>();
  h.rt.clientFor = (prefix = 'ROWBRIDGE_') => {
    const cached = clients.get(prefix);
    if (cached !== undefined) return cached;
    const { credentials, apiUrl } = credentialsFromEnv(h.env, prefix);
    const client = createPlatformClient({
      baseUrl: resolveBaseUrl({ baseUrl: apiUrl ?? '' }),
      headerPrefix: h.rt.settings.headerPrefix,
      credentials,
      limiter: createRateLimiter({
        budgetKey: `${h.rt.statePrefix}:budget:metrics-test`,
        redis: h.rt.redis,
        initialRatePerSec: h.rt.settings.initialRate,
        maxRatePerSec: h.rt.settings.maxRate,
      }),
      onEvent: (event) => metrics.onClientEvent(event),
    });
    clients.set(prefix, client);
    return client;
  };
  return {
    clients,
    async close() {
      for (const client of clients.values()) {
        await client.close();
        await client.limiter.stop();
      }
    },
  };
}

const JOB = `name: orders
source: { type: csv, path: ./orders.csv }
target: { worksheet: orders, mode: upsert, key: order_no, batchSize: 2, triggerWorkflow: false }
fields:
  order_no: Order Number
  amount: { from: Total }
`;

describe('Prometheus metrics of a real run', () => {
  let h: Harness;
  let metrics: Metrics;
  let instrumented: ReturnType<typeof instrumentClients>;
  let server: OpsServer;
  let run: { record: RunRecord; report: RunReport };

  beforeAll(async () => {
    // A tight emulator rate limit, so the run meets throttled answers to count.
    h = await createHarness('ops-metrics', { rateLimit: { requestsPerSecond: 2, burst: 1 } });
    metrics = createMetrics();
    instrumented = instrumentClients(h, metrics);
    // Rows are counted as batches record them: the worker wires the runtime's
    // onRowOutcomes; this harness runtime's batches write through a run store that does.
    const runs = createRunStore({
      redis: h.rt.redis,
      prefix: h.rt.statePrefix,
      onRecorded: (moved) => metrics.onRowOutcomes(moved),
    });
    const syncDeps = h.rt.syncDeps.bind(h.rt);
    h.rt.syncDeps = (client, log) => ({ ...syncDeps(client, log), runs });
    metrics.collectFrom({
      connection: h.rt.connection,
      queuePrefix: h.rt.queuePrefix,
      clients: () => instrumented.clients,
    });
    server = await startOpsServer({
      rt: h.rt,
      metrics,
      readiness: createReadiness(),
      port: 0,
      dashboard: false,
    });
    h.createWorksheet({
      name: 'Orders',
      alias: 'orders',
      fields: [
        { name: 'Order number', alias: 'order_no', type: '2', required: true, isTitle: true },
        { name: 'Amount', alias: 'amount', type: '6' },
      ],
    });
    await h.writeFile('orders.csv', 'Order Number,Total\nA-1,1\nA-2,two\nA-3,3\nA-4,4\nA-5,five\nA-6,6\n');
    await h.writeJob('orders', JOB);
    // The wiring the worker uses: a run job completes with its terminal record.
    const observed = new Promise<void>((resolve, reject) => {
      h.startWorkers().runWorker.on('completed', (_job, record: RunRecord | undefined) => {
        if (record === undefined) return;
        h.rt.runs.report(record.runId).then((report) => {
          metrics.observeRun(record, report);
          resolve();
        }, reject);
      });
    });
    run = await h.runJob('orders');
    await observed;
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await metrics?.close();
    await instrumented?.close();
    await h?.close();
  });

  async function scrape(): Promise<{ text: string; samples: Map<string, number>; type: string | null }> {
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    return { text, samples: parseExposition(text), type: res.headers.get('content-type') };
  }

  it('counts rows by outcome exactly as the run report does, dead letters by category', async () => {
    expect(run.record.status).toBe('completed');
    expect(run.report).toMatchObject({
      created: 4,
      deadLetteredTotal: 2,
      deadLettered: { 'invalid-row': 2 },
    });
    const { samples, type } = await scrape();
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(samples.get('rowbridge_rows_total{outcome="created"}')).toBe(run.report.created);
    expect(samples.get('rowbridge_rows_total{outcome="dead_lettered",category="invalid-row"}')).toBe(2);
    expect(sum(samples, 'rowbridge_rows_total', { outcome: 'updated' })).toBe(0);
    expect(sum(samples, 'rowbridge_rows_total')).toBe(run.report.created + run.report.deadLetteredTotal);
  });

  it('counts every exchange the emulator answered, by category, and the throttled ones', async () => {
    const { samples } = await scrape();
    const answered = h.emulator.requests;
    const throttledAnswers = answered.filter((r) => r.errorCode === 51 || r.errorCode === 90000).length;
    expect(throttledAnswers).toBeGreaterThan(0);
    expect(sum(samples, 'rowbridge_requests_total')).toBe(answered.length);
    expect(samples.get('rowbridge_requests_total{category="ok"}')).toBe(
      answered.filter((r) => r.errorCode === 1).length,
    );
    expect(samples.get('rowbridge_requests_total{category="throttled"}')).toBe(throttledAnswers);
    expect(samples.get('rowbridge_throttled_total')).toBe(throttledAnswers);
    expect(samples.has('rowbridge_retries_total')).toBe(true);
  });

  it('reads pace and queue depths at scrape time, and the run duration', async () => {
    const { samples } = await scrape();
    const pace = samples.get('rowbridge_pace_requests_per_second{credential="ROWBRIDGE_"}');
    expect(pace).toBeGreaterThan(0);
    expect(pace).toBe(instrumented.clients.get('ROWBRIDGE_')!.limiter.currentRate());
    expect(samples.get('rowbridge_queue_jobs{queue="runs",state="completed"}')).toBe(1);
    expect(samples.get('rowbridge_queue_jobs{queue="batches",state="waiting"}')).toBe(0);
    expect(samples.get('rowbridge_queue_jobs{queue="batches",state="failed"}')).toBe(0);
    expect(samples.get('rowbridge_run_duration_seconds_count{job="orders",status="completed"}')).toBe(1);
    expect(samples.get('rowbridge_run_duration_seconds_sum{job="orders",status="completed"}')).toBeCloseTo(
      run.report.durationMs / 1000,
      3,
    );
    expect(samples.has('process_cpu_user_seconds_total')).toBe(true);
  });

  it('counts a run once when it is observed again (a retried finalizer)', async () => {
    metrics.observeRun(run.record, run.report);
    metrics.observeRun({ ...run.record, runId: 'still-running', status: 'running' }, run.report);
    const { samples } = await scrape();
    expect(samples.get('rowbridge_rows_total{outcome="created"}')).toBe(run.report.created);
    expect(samples.get('rowbridge_run_duration_seconds_count{job="orders",status="completed"}')).toBe(1);
  });
});

describe('metrics scrape with Redis unreachable', () => {
  it('answers without the queue series instead of hanging', async () => {
    // Port 1: nothing listens. The BullMQ-style connection would wait forever.
    const connection = new Redis('redis://127.0.0.1:1', {
      maxRetriesPerRequest: null,
      retryStrategy: () => 200,
    });
    connection.on('error', () => undefined);
    const metrics = createMetrics(undefined, { scrapeTimeoutMs: 300, defaultMetrics: false });
    try {
      metrics.collectFrom({ connection, queuePrefix: 'rbtest-ops-metrics-down' });
      metrics.onClientEvent({ type: 'request', method: 'GET', path: '/v3/app', category: 'transient' });
      const { body } = await metrics.render();
      const samples = parseExposition(body);
      expect(samples.get('rowbridge_requests_total{category="transient"}')).toBe(1);
      expect(sum(samples, 'rowbridge_queue_jobs')).toBe(0);
      expect(body).not.toMatch(/^rowbridge_queue_jobs\{/m);
    } finally {
      await metrics.close();
      connection.disconnect();
    }
  });
});
