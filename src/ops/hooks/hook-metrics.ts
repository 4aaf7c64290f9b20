import type { Registry } from 'prom-client';
import { createMetricFactory } from '../metric-factory.ts';

/** Webhook series, on the process's metrics registry. */
export interface HookMetrics {
  received(job: string): void;
  /** `reason`: auth, body, unknown-job, unavailable. */
  refused(job: string, reason: string): void;
  duplicate(job: string): void;
  queued(job: string, hints: number): void;
  /** Milliseconds from each hint's call to its row landing. */
  landed(job: string, waitsMs: readonly number[]): void;
}

export function createHookMetrics(registry: Registry): HookMetrics {
  const metric = createMetricFactory(registry);
  const received = metric.counter('rowbridge_hooks_received_total', 'Webhook calls received, by job.', [
    'job',
  ]);
  const refused = metric.counter(
    'rowbridge_hooks_refused_total',
    'Webhook calls refused: auth (401), body (400), unknown-job (404), unavailable (503).',
    ['job', 'reason'],
  );
  const duplicate = metric.counter(
    'rowbridge_hooks_duplicate_total',
    'Webhook calls whose delivery id was seen before (answered 200, nothing queued).',
    ['job'],
  );
  const queued = metric.counter(
    'rowbridge_hook_hints_queued_total',
    'Rows (ids, keys or records) that webhook calls queued.',
    ['job'],
  );
  const landed = metric.histogram(
    'rowbridge_hook_landed_seconds',
    'From a webhook call to its row landing in the worksheet.',
    ['job'],
    [0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
  );
  return {
    received: (job) => received.inc({ job }),
    refused: (job, reason) => refused.inc({ job, reason }),
    duplicate: (job) => duplicate.inc({ job }),
    queued: (job, hints) => queued.inc({ job }, hints),
    landed(job, waitsMs) {
      for (const ms of waitsMs) landed.observe({ job }, ms / 1000);
    },
  };
}
