/**
 * Attack (issue 13) in a real browser (Debian chromium): a page on another origin tries
 * the job actions of a writable loopback dashboard that needs no login, which is the
 * worst case: a no-cors text/plain POST, an auto-submitted form, and a JSON call with
 * the CSRF header (which needs a CORS preflight the dashboard never grants). No run may
 * be queued and the schedule must stay; the dashboard's own button still works.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import type { Browser } from 'playwright-core';
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
import { launchChromium } from '../helpers/browser.ts';

const JOB = `name: orders
source: { type: csv, path: ./orders.csv }
target: { worksheet: orders, mode: append, triggerWorkflow: false }
fields:
  order_no: Order Number
schedule: '0 0 1 1 *'
`;

describe('job actions against a hostile page in chromium', () => {
  let h: Harness;
  let metrics: Metrics;
  let server: OpsServer;
  let attacker: Server;
  let attackerUrl: string;
  let browser: Browser;
  let runs: Queue;

  beforeAll(async () => {
    h = await createHarness('sec-actions-browser');
    await h.writeJob('orders', JOB);
    expect((await registerSchedules(h.rt)).registered).toEqual(['orders']);
    metrics = createMetrics(undefined, { defaultMetrics: false });
    server = await startOpsServer({
      rt: h.rt,
      metrics,
      readiness: createReadiness(),
      port: 0,
      dashboard: true,
      allowWrites: true,
    });
    runs = new Queue(RUN_QUEUE, { connection: h.rt.connection, prefix: h.rt.queuePrefix });
    const base = `${server.url}/jobs/orders`;
    // Each request is awaited (a no-cors fetch settles once the answer came; the form's
    // frame loads once it did), so the checks below run after the dashboard answered.
    const html = `<!doctype html><body>
      <form id="f" method="POST" action="${base}/pause" target="sink"><input name="x" value="1"></form>
      <iframe name="sink" id="sink"></iframe>
      <script>
        const settle = (p) => p.then((r) => r.type === 'opaque' ? 'opaque' : r.status, (e) => 'blocked');
        window.done = (async () => {
          const results = [];
          results.push(await settle(fetch(${JSON.stringify(`${base}/run`)}, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{}' })));
          results.push(await settle(fetch(${JSON.stringify(`${base}/replay`)}, { method: 'POST', headers: { 'content-type': 'application/json', 'x-rowbridge-csrf': '1' }, body: '{}' })));
          await new Promise((resolve) => {
            document.getElementById('sink').addEventListener('load', resolve, { once: true });
            document.getElementById('f').submit();
          });
          return results;
        })();
      </script></body>`;
    attacker = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerUrl = `http://localhost:${(attacker.address() as AddressInfo).port}/`;
    browser = await launchChromium();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => attacker?.close(resolve));
    await runs?.obliterate({ force: true }).catch(() => undefined);
    await runs?.close();
    await server?.close();
    await metrics?.close();
    await h?.close();
  });

  async function queuedRuns(): Promise<string[]> {
    const jobs = await runs.getJobs(['waiting', 'delayed', 'active', 'prioritized']);
    // The scheduler's next iteration waits delayed; any other job is a run someone queued.
    return jobs.filter((job) => job.repeatJobKey === undefined).map((job) => String(job.id));
  }

  it('a cross-site page cannot run, replay or pause a job', async () => {
    const page = await browser.newPage();
    const seen: string[] = [];
    page.on('requestfailed', (req) => seen.push(`${req.url()} ${req.failure()?.errorText ?? ''}`));
    page.on('response', (res) => seen.push(`${res.url()} ${res.status()}`));
    await page.goto(attackerUrl);
    const results = await page.evaluate(() => (globalThis as unknown as { done: Promise<unknown[]> }).done);
    // Neither answer reaches the page: CORP hides the text/plain POST's, and the JSON call
    // never passed its preflight.
    expect(results).toEqual(['blocked', 'blocked']);
    const base = `${server.url}/jobs/orders`;
    // The text/plain POST did reach the dashboard (its answer was blocked on the way back),
    // and the form was answered 403.
    expect(seen.filter((line) => line.startsWith(`${base}/run net::ERR_BLOCKED_BY_RESPONSE`))).toHaveLength(
      1,
    );
    expect(seen).toContain(`${base}/pause 403`);
    expect(await queuedRuns()).toEqual([]);
    expect(await h.rt.runs.list({ job: 'orders' })).toEqual([]);
    expect((await runs.getJobSchedulers()).map((s) => s.key)).toEqual(['orders']);
    await page.close();
  });

  it("the dashboard's own Run now button queues a run", async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/jobs/orders`);
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.getByRole('status').getByRole('link', { name: 'Open the run' }).waitFor();
    expect(await queuedRuns()).toHaveLength(1);
    await page.close();
  });
});
