/**
 * Attack: a cross-site page (or a DNS-rebound one) drives a writable dashboard with the
 * viewer's credentials: a text/plain POST adds a forced run, a cross-origin PUT pauses
 * the runs queue. Both must be refused even with writes allowed; the dashboard's own
 * page (same origin, JSON) still may.
 */
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_QUEUE } from '../../src/queue/queues.ts';
import { createReadiness } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { rawRequest } from './raw-request.ts';

describe('a writable dashboard refuses cross-site requests', () => {
  let h: Harness;
  let metrics: Metrics;
  let server: OpsServer;
  let runs: Queue;

  beforeAll(async () => {
    h = await createHarness('sec-csrf');
    metrics = createMetrics(undefined, { defaultMetrics: false });
    server = await startOpsServer({
      rt: h.rt,
      metrics,
      readiness: createReadiness(),
      port: 0,
      dashboard: true,
      allowWrites: true,
      // The name a TLS reverse proxy serves it under, forwarding Host 127.0.0.1:port.
      access: { hosts: 'dash.example.com' },
    });
    runs = new Queue(RUN_QUEUE, { connection: h.rt.connection, prefix: h.rt.queuePrefix });
  }, 60_000);

  afterAll(async () => {
    await runs?.close();
    await server?.close();
    await metrics?.close();
    await h?.close();
  });

  it('refuses a text/plain POST that adds a forced run', async () => {
    const res = await rawRequest(`${server.url}/queues/api/queues/runs/add`, {
      method: 'POST',
      headers: {
        'content-type': 'text/plain',
        origin: 'http://evil.example',
        'sec-fetch-site': 'cross-site',
      },
      body: JSON.stringify({ name: 'run', data: { job: 'orders', trigger: 'enqueue', force: true } }),
    });
    expect(res.status).toBe(403);
    const same = await rawRequest(`${server.url}/queues/api/queues/runs/add`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', origin: server.url, 'sec-fetch-site': 'same-origin' },
      body: JSON.stringify({ name: 'run', data: { job: 'orders', trigger: 'enqueue', force: true } }),
    });
    expect(same.status).toBe(403);
    expect(same.body).toContain('application/json');
    expect(await runs.count()).toBe(0);
  });

  it('refuses a cross-origin PUT that pauses the runs queue, and one without Origin or the CSRF header', async () => {
    const evil = await rawRequest(`${server.url}/queues/api/queues/runs/pause`, {
      method: 'PUT',
      headers: { origin: 'http://evil.example:3000' },
    });
    expect(evil.status).toBe(403);
    const bare = await rawRequest(`${server.url}/queues/api/queues/runs/pause`, { method: 'PUT' });
    expect(bare.status).toBe(403);
    expect(bare.body).toContain('x-rowbridge-csrf');
    expect(await runs.isPaused()).toBe(false);
  });

  it('lets the dashboard itself (same origin, JSON) add and pause', async () => {
    const added = await rawRequest(`${server.url}/queues/api/queues/runs/add`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.url, 'sec-fetch-site': 'same-origin' },
      body: JSON.stringify({
        name: 'probe',
        data: { job: 'none', trigger: 'enqueue' },
        options: { delay: 3_600_000 },
      }),
    });
    expect(added.status).toBe(200);
    const paused = await rawRequest(`${server.url}/queues/api/queues/runs/pause`, {
      method: 'PUT',
      headers: { 'x-rowbridge-csrf': '1' },
    });
    expect(paused.status).toBe(200);
    expect(await runs.isPaused()).toBe(true);
    await runs.resume();
    const proxied = await rawRequest(`${server.url}/queues/api/queues/runs/pause`, {
      method: 'PUT',
      headers: { origin: 'https://dash.example.com', 'sec-fetch-site': 'same-origin' },
    });
    expect(proxied.status).toBe(200);
    await runs.resume();
    await runs.obliterate({ force: true });
  });
});
