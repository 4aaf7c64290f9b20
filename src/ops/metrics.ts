/**
 * Prometheus metrics of one rowbridge process (issue #5, point 3), on a prom-client
 * Registry of its own so tests and several runtimes in one process never share series.
 *
 * How a process feeds it:
 * - every platform client's `onEvent` goes to {@link Metrics.onClientEvent} (requests by
 *   category, throttled answers, retries, token refreshes), exchange by exchange;
 * - {@link Metrics.onRowOutcomes} gets the row outcomes each batch newly records (the run
 *   store's `onRecorded`), so rows are counted while a run goes on, and a retried batch,
 *   whose outcomes are already recorded, counts nothing twice;
 * - {@link Metrics.observeRun} gets each terminal run with `runs.report(runId)` (what the
 *   finalizer did: deletes, dead letters resolved; pull runs' rows; run duration): a run
 *   job completes with its terminal record, so the worker listens to
 *   `runWorker.on('completed', (job, record) => ...)`;
 * - {@link Metrics.collectFrom} is given the runtime once: queue depths, the current
 *   pace of each credential's limiter and the lag of change streams (cdc-lag-metrics.ts)
 *   are then read at scrape time, not kept up to date.
 *
 * Counters are per process; Prometheus sums them over the workers.
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { ClientEvent } from '../api/create-api-client.ts';
import type { RateLimiter } from '../api/limiter/create-rate-limiter.ts';
import { BATCH_QUEUE, RUN_QUEUE } from '../queue/queues.ts';
import { TERMINAL_STATUSES } from '../sync/state/run-store.ts';
import type { RunRecord, RunReport } from '../sync/state/run-store.ts';
import type { CdcLagThresholds } from '../sync/cdc/cdc-lag.ts';
import { addCdcLagMetrics } from './cdc-lag-metrics.ts';
import type { CdcLagSource } from './cdc-lag-metrics.ts';
import { createMetricFactory } from './metric-factory.ts';

/** BullMQ job states exported as `rowbridge_queue_jobs{queue,state}`. */
export const QUEUE_STATES = [
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'waiting-children',
  'completed',
  'failed',
] as const;

/**
 * What scrape-time collection reads. A {@link Runtime} satisfies it; `clients` is the
 * runtime's platform clients by credentials env prefix (`ROWBRIDGE_`, `CRM_`, ...).
 */
export interface MetricsSource {
  connection: Redis;
  queuePrefix: string;
  /** The clients made so far; the pace gauge has one series per entry. Without it there is no pace series. */
  clients?: () => Iterable<readonly [string, { limiter: Pick<RateLimiter, 'currentRate'> }]>;
  /** Where change streams save their status, and the lag thresholds; without them no cdc lag series. */
  redis?: CdcLagSource['redis'];
  statePrefix?: string;
  settings?: CdcLagThresholds;
}

/** The metrics of one process and the hooks that feed them. */
export interface Metrics {
  readonly registry: Registry;
  /** Counts one client event (pass it as, or call it from, the client's `onEvent`). */
  onClientEvent(event: ClientEvent): void;
  /** Counts rows by the outcome just recorded for them (`created`, `dead:<category>`...). */
  onRowOutcomes(moved: Readonly<Record<string, number>>): void;
  /**
   * Adds what a terminal run did beyond its batches (deletes, resolved dead letters, a
   * pull run's rows) and its duration. A run observed twice (a finalizer retried by
   * BullMQ) is counted once; non-terminal records are ignored.
   */
  observeRun(record: RunRecord, report: RunReport): void;
  /** Counts one notification delivery attempt by channel type and result (`sent`, `failed`). */
  onNotification(result: { channelType: string; ok: boolean }): void;
  /** Reads queue depths and pace from `source` at every scrape. Call once. */
  collectFrom(source: MetricsSource): void;
  /** The exposition text and its content type, for `GET /metrics`. */
  render(): Promise<{ contentType: string; body: string }>;
  /** Releases the queue handles `collectFrom` opened (the connection stays open). */
  close(): Promise<void>;
}

/** Options of {@link createMetrics}. */
export interface MetricsOptions {
  /** Longest wait for queue counts at a scrape; past it the queue series are left out. @defaultValue 2000 */
  scrapeTimeoutMs?: number;
  /** Node.js process metrics (CPU, memory, event loop lag). @defaultValue true */
  defaultMetrics?: boolean;
}

/** How many run ids are remembered to count each run once. */
const OBSERVED_RUNS_KEPT = 1000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

export function createMetrics(registry: Registry = new Registry(), options: MetricsOptions = {}): Metrics {
  const scrapeTimeoutMs = options.scrapeTimeoutMs ?? 2000;
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  let source: MetricsSource | undefined;
  let queues: Array<Queue> = [];
  const observed = new Set<string>();

  const metric = createMetricFactory(registry);
  const rows = metric.counter(
    'rowbridge_rows_total',
    'Source rows by outcome of their run; dead_lettered rows carry the error category.',
    ['outcome', 'category'],
  );
  const notifications = metric.counter(
    'rowbridge_notifications_total',
    'Notification delivery attempts by channel type and result (sent, failed); a failed one is retried.',
    ['channel', 'result'],
  );
  const resolved = metric.counter(
    'rowbridge_dead_letters_resolved_total',
    'Dead letters removed because their row landed in a later run or replay.',
  );
  const requests = metric.counter(
    'rowbridge_requests_total',
    'HTTP exchanges with the platform by result: ok, or the error category.',
    ['category'],
  );
  const throttled = metric.counter(
    'rowbridge_throttled_total',
    'Throttled answers (codes 51, 90000, HTTP 429).',
  );
  const retries = metric.counter('rowbridge_retries_total', 'Retries scheduled by the platform client.');
  const refreshes = metric.counter('rowbridge_token_refreshes_total', 'Access tokens refreshed.');
  const durations = metric.histogram(
    'rowbridge_run_duration_seconds',
    'Duration of finished runs, from start to the terminal status.',
    ['job', 'status'],
    [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600],
  );
  addCdcLagMetrics(
    metric,
    () =>
      source?.redis === undefined || source.statePrefix === undefined || source.settings === undefined
        ? undefined
        : { redis: source.redis, statePrefix: source.statePrefix, settings: source.settings },
    scrapeTimeoutMs,
  );
  const pace = new Gauge({
    name: 'rowbridge_pace_requests_per_second',
    help: "Current shared request rate of each credential's budget (all workers together).",
    labelNames: ['credential'] as const,
    registers,
    collect() {
      pace.reset();
      for (const [credential, client] of source?.clients?.() ?? [])
        pace.set({ credential }, client.limiter.currentRate());
    },
  });
  const queueJobs = new Gauge({
    name: 'rowbridge_queue_jobs',
    help: 'Jobs in the BullMQ queues by state.',
    labelNames: ['queue', 'state'] as const,
    registers,
    async collect() {
      queueJobs.reset();
      // With Redis down BullMQ's connection waits forever: a scrape must still answer,
      // so the queue series are left out rather than the whole scrape hanging.
      const counts = await Promise.all(
        queues.map((q) =>
          withTimeout(q.getJobCounts(...QUEUE_STATES), scrapeTimeoutMs).catch(() => undefined),
        ),
      );
      queues.forEach((q, i) => {
        const byState = counts[i];
        if (byState === undefined) return;
        for (const state of QUEUE_STATES) queueJobs.set({ queue: q.name, state }, byState[state] ?? 0);
      });
    },
  });

  return {
    registry,
    onClientEvent(event) {
      if (event.type === 'request') {
        requests.inc({ category: event.category ?? 'ok' });
        if (event.category === 'throttled') throttled.inc();
      } else if (event.type === 'retry') retries.inc();
      else refreshes.inc();
    },
    onNotification(result) {
      notifications.inc({ channel: result.channelType, result: result.ok ? 'sent' : 'failed' });
    },
    onRowOutcomes(moved) {
      for (const [outcome, n] of Object.entries(moved)) {
        if (n <= 0) continue;
        if (outcome.startsWith('dead:'))
          rows.inc({ outcome: 'dead_lettered', category: outcome.slice(5) }, n);
        // The report counts duplicates of a key within a run as skipped; so do the metrics.
        else rows.inc({ outcome: outcome === 'duplicate' ? 'skipped' : outcome }, n);
      }
    },
    observeRun(record, report) {
      if (!TERMINAL_STATUSES.has(record.status) || observed.has(record.runId)) return;
      observed.add(record.runId);
      if (observed.size > OBSERVED_RUNS_KEPT) {
        const oldest = observed.values().next();
        if (oldest.done !== true) observed.delete(oldest.value);
      }
      // Batch rows were counted as they were recorded; a pull run's rows and the
      // finalizer's deletes have no batch, so they are counted here.
      if (record.mode === 'pull' && report.created > 0) rows.inc({ outcome: 'created' }, report.created);
      if (report.deleted > 0) rows.inc({ outcome: 'deleted' }, report.deleted);
      if (report.resolved > 0) resolved.inc(report.resolved);
      durations.observe({ job: record.job, status: record.status }, report.durationMs / 1000);
    },
    collectFrom(next) {
      if (source !== undefined) throw new Error('metrics: collectFrom was already given a runtime');
      source = next;
      const opts = { connection: next.connection, prefix: next.queuePrefix };
      queues = [new Queue(RUN_QUEUE, opts), new Queue(BATCH_QUEUE, opts)];
      // The runtime already logs its connection's errors; a queue without a listener
      // would print each one again.
      for (const q of queues) q.on('error', () => undefined);
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
    async close() {
      const open = queues;
      queues = [];
      source = undefined;
      await Promise.all(open.map((q) => q.close().catch(() => undefined)));
    },
  };
}
