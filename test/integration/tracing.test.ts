/**
 * Traces across workers (docs/tracing.md), recorded by an in-memory exporter: one run
 * worked by two sets of workers is one trace, its read span the root, its batches and
 * finalize step children of it, each API request a child of the batch that made it with
 * its route, status and the platform's error code; every job span names the job and run.
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTracing } from '../../src/cli/tracing-setup.ts';
import { createWorkers } from '../../src/queue/create-workers.ts';
import type { Workers } from '../../src/queue/create-workers.ts';
import { enqueueRun } from '../../src/queue/enqueue-run.ts';
import { writeLedgerJob } from '../helpers/cli-process.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

describe('traces across workers', { timeout: 120_000 }, () => {
  const exporter = new InMemorySpanExporter();
  let stop: () => Promise<void>;
  let h: Harness | undefined;
  let second: Workers | undefined;
  beforeAll(async () => {
    stop = await startTracing({}, exporter);
  });
  afterAll(async () => {
    await stop();
  });
  afterEach(async () => {
    await second?.close();
    second = undefined;
    await h?.close();
    h = undefined;
  });

  it('one run over two workers is one tree: run, batches, API requests', async () => {
    // Slow writes, one batch at a time per worker set: both sets take batches. Some
    // writes answer the envelope error 99999 and are retried.
    h = await createHarness('tracing', {
      faults: { seed: 11, latencyMs: [150, 150], writesOnly: true, error99999: 0.3 },
    });
    const ws = await writeLedgerJob(h, 400, 'upsert');
    // Batches of 10: 100 rows a batch job, four batch jobs.
    await h.writeJob(
      'ledger',
      'name: ledger\nsource: { type: csv, path: ./ledger.csv }\ntarget: { worksheet: ledger, mode: upsert, key: entry, batchSize: 10 }\nfields: { entry: entry, amount: amount }\n',
    );
    h.startWorkers(1);
    second = createWorkers(h.rt, { concurrency: 1, closeTimeoutMs: 10_000 });
    await Promise.all([h.workers!.ready, second.ready]);
    const runId = await enqueueRun(h.rt, 'ledger', { trigger: 'enqueue' });
    const done = await h.waitForRun(runId, 90_000);
    expect(done.record.status).toBe('completed');
    expect(h.emulator.state.rowCount(ws)).toBe(400);

    const spans = exporter.getFinishedSpans();
    const ofRun = spans.filter((s) => s.attributes['rowbridge.run_id'] === runId);
    const read = ofRun.filter((s) => s.name === 'rowbridge.run read');
    expect(read).toHaveLength(1);
    const root = read[0]!;
    expect(root.parentSpanContext).toBeUndefined();
    const traceId = root.spanContext().traceId;
    const inTrace = spans.filter((s) => s.spanContext().traceId === traceId);
    const parentOf = (s: ReadableSpan) =>
      inTrace.find((p) => p.spanContext().spanId === s.parentSpanContext?.spanId);

    const finalize = inTrace.filter((s) => s.name === 'rowbridge.run finalize');
    expect(finalize.map((s) => parentOf(s))).toEqual([root]);
    const batches = inTrace.filter((s) => s.name === 'rowbridge.batch');
    expect(batches.length).toBe(done.report.batches);
    for (const b of batches) {
      expect(parentOf(b)).toBe(root);
      expect(b.attributes).toMatchObject({ 'rowbridge.job': 'ledger', 'rowbridge.run_id': runId });
    }
    // Two sets of workers took part.
    const workers = new Set(batches.map((b) => b.attributes['rowbridge.worker']));
    expect([...workers], `${batches.length} batches`).toHaveLength(2);

    const requests = inTrace.filter((s) => s.attributes['http.request.method'] !== undefined);
    const writes = requests.filter((r) => batches.includes(parentOf(r)!));
    expect(writes.length).toBeGreaterThanOrEqual(batches.length);
    for (const r of writes) {
      expect(r.attributes['http.route']).toMatch(/^\/v3\//);
      expect(r.attributes['http.response.status_code']).toBe(200);
    }
    expect(writes.some((r) => r.attributes['rowbridge.platform.error_code'] === 99999)).toBe(true);
    // Every span of the trace is of this run: the reads of the run span included.
    expect(inTrace.every((s) => s === root || parentOf(s) !== undefined)).toBe(true);
  });
});
