import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';

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
  const registers = [registry];
  const received = new Counter({
    name: 'rowbridge_hooks_received_total',
    help: 'Webhook calls received, by job.',
    labelNames: ['job'] as const,
    registers,
  });
  const refused = new Counter({
    name: 'rowbridge_hooks_refused_total',
    help: 'Webhook calls refused: auth (401), body (400), unknown-job (404), unavailable (503).',
    labelNames: ['job', 'reason'] as const,
    registers,
  });
  const duplicate = new Counter({
    name: 'rowbridge_hooks_duplicate_total',
    help: 'Webhook calls whose delivery id was seen before (answered 200, nothing queued).',
    labelNames: ['job'] as const,
    registers,
  });
  const queued = new Counter({
    name: 'rowbridge_hook_hints_queued_total',
    help: 'Rows (ids, keys or records) that webhook calls queued.',
    labelNames: ['job'] as const,
    registers,
  });
  const landed = new Histogram({
    name: 'rowbridge_hook_landed_seconds',
    help: 'From a webhook call to its row landing in the worksheet.',
    labelNames: ['job'] as const,
    buckets: [0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
    registers,
  });
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
