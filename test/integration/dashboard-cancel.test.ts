/**
 * The run page's Cancel buttons (issue 23 §4): guarded like the job actions (a read-only
 * dashboard has none and refuses the POST; a writable one wants the CSRF header), they
 * stop the run as `rowbridge cancel` does: resumable, or abandoned.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadiness } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { rawRequest } from '../security/raw-request.ts';

const TOKEN = 'dashboard-token-0123456789abcdef';

describe('Cancel on the run page', () => {
  let h: Harness;
  let metrics: Metrics;
  let readOnly: OpsServer;
  let writable: OpsServer;

  beforeAll(async () => {
    h = await createHarness('dashboard-cancel');
    metrics = createMetrics(undefined, { defaultMetrics: false });
    const common = { rt: h.rt, metrics, readiness: createReadiness(), port: 0, dashboard: true } as const;
    readOnly = await startOpsServer({ ...common, access: { token: TOKEN } });
    writable = await startOpsServer({ ...common, allowWrites: true, access: { token: TOKEN } });
  }, 60_000);

  afterAll(async () => {
    await readOnly?.close();
    await writable?.close();
    await metrics?.close();
    await h?.close();
  });

  const auth = { authorization: `Bearer ${TOKEN}` };
  const sameOrigin = (server: OpsServer) => ({
    ...auth,
    'content-type': 'application/json',
    origin: server.url,
    'sec-fetch-site': 'same-origin',
    'x-rowbridge-csrf': '1',
  });

  /** A run of job `orders` that a worker is working (as its record says). */
  async function runningRun(n: number): Promise<string> {
    const runId = `orders-2026-${n}`;
    await h.rt.runs.create({ runId, job: 'orders', trigger: 'enqueue' });
    await h.rt.runs.update(runId, { status: 'running', mode: 'upsert', startedAt: new Date().toISOString() });
    return runId;
  }

  it('a read-only dashboard shows no Cancel and refuses it; a writable one wants the CSRF header', async () => {
    const runId = await runningRun(1);
    const page = await rawRequest(`${readOnly.url}/runs/${runId}`, { headers: auth });
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('data-action');
    const refused = await rawRequest(`${readOnly.url}/runs/${runId}/cancel`, {
      method: 'POST',
      headers: sameOrigin(readOnly),
      body: '{}',
    });
    expect(refused.status).toBe(405);
    const { 'x-rowbridge-csrf': _, ...noCsrf } = sameOrigin(writable);
    const crossSite = await rawRequest(`${writable.url}/runs/${runId}/cancel`, {
      method: 'POST',
      headers: { ...noCsrf, origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
      body: '{}',
    });
    expect(crossSite.status).toBe(403);
    expect((await h.rt.runs.get(runId))!.status).toBe('running');
  });

  it('Cancel stops the run and keeps it resumable; Abandon gives it up', async () => {
    const runId = await runningRun(2);
    const page = await rawRequest(`${writable.url}/runs/${runId}`, { headers: auth });
    expect(page.body).toContain(`data-action="/runs/${runId}/cancel"`);
    expect(page.body).toContain(`data-action="/runs/${runId}/abandon"`);

    const cancel = await rawRequest(`${writable.url}/runs/${runId}/cancel`, {
      method: 'POST',
      headers: sameOrigin(writable),
      body: '{}',
    });
    expect(cancel.status, cancel.body).toBe(200);
    expect(JSON.parse(cancel.body)).toEqual({
      message: `Run ${runId} cancelled: it stays resumable (rowbridge run orders resumes it).`,
    });
    expect(await h.rt.runs.get(runId)).toMatchObject({
      status: 'failed',
      message: 'cancelled by the dashboard',
    });
    expect(await h.rt.runs.resumableRun('orders')).toBe(runId);

    // Stopped and resumable: only Abandon is offered now.
    const after = await rawRequest(`${writable.url}/runs/${runId}`, { headers: auth });
    expect(after.body).not.toContain(`/runs/${runId}/cancel"`);
    const abandon = await rawRequest(`${writable.url}/runs/${runId}/abandon`, {
      method: 'POST',
      headers: sameOrigin(writable),
      body: '{}',
    });
    expect(abandon.status, abandon.body).toBe(200);
    expect(await h.rt.runs.resumableRun('orders')).toBeUndefined();
  });
});
