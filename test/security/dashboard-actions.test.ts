/**
 * Attack (issue 13): the job actions (run now, pause or resume a schedule, replay dead
 * letters) are state-changing routes. A read-only dashboard refuses them whoever asks;
 * a writable one refuses them without a login, from another site (text/plain, a form,
 * a cross-origin JSON call), without Origin or the CSRF header, and under a foreign
 * Host. The job page never shows the value of an `${ENV}` reference or a credential
 * written into the spec, and a read-only dashboard's CSV download carries no rows.
 */
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_QUEUE } from '../../src/queue/queues.ts';
import { registerSchedules } from '../../src/queue/schedules.ts';
import { createReadiness } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { rawRequest } from './raw-request.ts';

const TOKEN = 'dashboard-token-0123456789abcdef';
const ENV_SECRET = 'helpdesk-7f3a9c1e5b2d4f6a';
const LITERAL_SECRET = 'literal-key-5e8d1c0b9a7f';
const PERSONAL = 'jane.doe@example.com';
const JOB = `name: tickets
source:
  type: http
  url: https://helpdesk.example.com/api/v2/tickets?api_key=${LITERAL_SECRET}
  headers:
    Authorization: Bearer \${HELPDESK_TOKEN}
  itemsPath: tickets
target: { worksheet: tickets, mode: append, triggerWorkflow: false }
fields:
  subject: subject
schedule: '0 0 1 1 *'
`;
const ACTIONS = ['run', 'pause', 'resume', 'replay'] as const;

describe('job actions on the dashboard', () => {
  let h: Harness;
  let metrics: Metrics;
  let readOnly: OpsServer;
  let writable: OpsServer;
  let runs: Queue;

  beforeAll(async () => {
    h = await createHarness('sec-actions', {}, { HELPDESK_TOKEN: ENV_SECRET });
    await h.writeJob('tickets', JOB);
    await h.rt.deadLetters.add([
      {
        id: 'tickets-r0:0',
        job: 'tickets',
        runId: 'tickets-r0',
        category: 'invalid-row',
        field: 'subject',
        message: 'subject: is required',
        source: { data: { requester: PERSONAL }, position: { index: 0 } },
        attempts: 1,
      },
    ]);
    expect((await registerSchedules(h.rt)).registered).toEqual(['tickets']);
    metrics = createMetrics(undefined, { defaultMetrics: false });
    const common = { rt: h.rt, metrics, readiness: createReadiness(), port: 0, dashboard: true } as const;
    readOnly = await startOpsServer({ ...common, access: { token: TOKEN } });
    writable = await startOpsServer({ ...common, allowWrites: true, access: { token: TOKEN } });
    runs = new Queue(RUN_QUEUE, { connection: h.rt.connection, prefix: h.rt.queuePrefix });
  }, 60_000);

  afterAll(async () => {
    await runs?.obliterate({ force: true }).catch(() => undefined);
    await runs?.removeJobScheduler('tickets').catch(() => undefined);
    await runs?.close();
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
  const post = (server: OpsServer, action: string, headers: Record<string, string>, body = '{}') =>
    rawRequest(`${server.url}/jobs/tickets/${action}`, { method: 'POST', headers, body });

  /** Nothing changed: no run queued or recorded, the schedule registered, the dead letter kept. */
  async function expectUntouched(): Promise<void> {
    // The scheduler's own next iteration waits delayed; nothing else may be queued.
    const queued = await runs.getJobs(['waiting', 'delayed', 'active', 'prioritized']);
    expect(queued.filter((job) => job.repeatJobKey === undefined).map((job) => job.id)).toEqual([]);
    expect(await h.rt.runs.list({ job: 'tickets' })).toEqual([]);
    expect((await runs.getJobSchedulers()).map((s) => s.key)).toEqual(['tickets']);
    expect(await h.rt.deadLetters.counts({ job: 'tickets' })).toEqual({ 'invalid-row': 1 });
  }

  it('a read-only dashboard refuses every action, even from its own page, and shows no buttons', async () => {
    for (const action of ACTIONS) {
      const res = await post(readOnly, action, sameOrigin(readOnly));
      // The guard answers before the route: writes are not allowed on this dashboard at all.
      expect(res.status, action).toBe(405);
      expect(res.body).toContain('read-only');
    }
    await expectUntouched();
    const page = await rawRequest(`${readOnly.url}/jobs/tickets`, { headers: auth });
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('data-action');
    expect(page.body).toContain('Read-only dashboard');
  });

  it('a writable dashboard refuses actions without a login, cross-site, as a form, or under a foreign Host', async () => {
    const { authorization: _, ...noLogin } = sameOrigin(writable);
    expect((await post(writable, 'run', noLogin)).status).toBe(401);
    for (const action of ACTIONS) {
      // A hostile page's no-cors text/plain POST, which carries the viewer's basic login.
      const plain = await post(
        writable,
        action,
        {
          ...auth,
          'content-type': 'text/plain',
          origin: 'http://evil.example',
          'sec-fetch-site': 'cross-site',
        },
        '{}',
      );
      expect(plain.status, action).toBe(403);
      // A cross-origin JSON call with the header (a browser would preflight; the server refuses anyway).
      const json = await post(writable, action, { ...sameOrigin(writable), origin: 'http://evil.example' });
      expect(json.status, action).toBe(403);
      const form = await post(
        writable,
        action,
        { ...sameOrigin(writable), 'content-type': 'application/x-www-form-urlencoded' },
        'x=1',
      );
      expect(form.status, action).toBe(403);
      // A script or tool that sends neither Origin nor the CSRF header.
      const bare = await post(writable, action, { ...auth, 'content-type': 'application/json' });
      expect(bare.status, action).toBe(403);
      const rebound = await post(writable, action, { ...sameOrigin(writable), host: 'rebound.example' });
      expect(rebound.status, action).toBe(421);
    }
    await expectUntouched();
  });

  it('the dashboard’s own page may act (the guard lets the real thing through)', async () => {
    const res = await post(writable, 'pause', sameOrigin(writable));
    expect(res.status).toBe(200);
    expect(await runs.getJobSchedulers()).toEqual([]);
    expect((await post(writable, 'resume', sameOrigin(writable))).status).toBe(200);
    expect((await runs.getJobSchedulers()).map((s) => s.key)).toEqual(['tickets']);
    const run = await post(writable, 'run', sameOrigin(writable));
    expect(run.status).toBe(202);
    const { runId } = JSON.parse(run.body) as { runId: string };
    expect((await runs.getJob(runId))?.data).toMatchObject({ job: 'tickets', trigger: 'enqueue' });
  });

  it('shows the spec with references by name, never an env value or a credential written in it', async () => {
    for (const server of [readOnly, writable]) {
      const page = await rawRequest(`${server.url}/jobs/tickets`, { headers: auth });
      expect(page.status).toBe(200);
      expect(page.body).toContain('Authorization: Bearer ${HELPDESK_TOKEN}');
      expect(page.body).not.toContain(ENV_SECRET);
      expect(page.body).not.toContain(LITERAL_SECRET);
      expect(page.body).toContain('api_key=••••••');
      const jobs = await rawRequest(`${server.url}/jobs`, { headers: auth });
      expect(jobs.body).not.toContain(LITERAL_SECRET);
    }
  });

  it('a read-only dashboard downloads the dead letters’ reasons, not their rows', async () => {
    const ro = await rawRequest(`${readOnly.url}/dead-letters.csv?job=tickets`, { headers: auth });
    expect(ro.status).toBe(200);
    expect(ro.headers['content-type']).toContain('text/csv');
    expect(ro.body).toContain('tickets-r0:0');
    expect(ro.body).toContain('subject: is required');
    expect(ro.body).not.toContain(PERSONAL);
    const rw = await rawRequest(`${writable.url}/dead-letters.csv?job=tickets`, { headers: auth });
    expect(rw.body).toContain(PERSONAL);
    expect((await rawRequest(`${readOnly.url}/dead-letters.csv?job=tickets`)).status).toBe(401);
  });
});
