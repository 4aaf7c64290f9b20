/**
 * The CSRF and DNS-rebinding attacks in a real browser (Debian chromium): a page on
 * another origin posts text/plain and a form at a writable dashboard, and a page whose
 * name was rebound to 127.0.0.1 calls the dashboard's API as its own origin. Neither may
 * pause the runs queue or add a run; the dashboard's own page still can.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_QUEUE } from '../../src/queue/queues.ts';
import { createReadiness } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { launchChromium } from '../helpers/browser.ts';

describe('a writable dashboard against a hostile page in chromium', () => {
  let h: Harness;
  let metrics: Metrics;
  let server: OpsServer;
  let attacker: Server;
  let attackerUrl: string;
  let browser: Browser;
  let runs: Queue;

  beforeAll(async () => {
    h = await createHarness('sec-browser');
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
    const target = `${server.url}/queues/api/queues/runs`;
    const body = JSON.stringify({ name: 'run', data: { job: 'orders', trigger: 'enqueue', force: true } });
    // What a hostile site serves: a no-cors text/plain POST and an auto-submitted form.
    const html = `<!doctype html><body>
      <form id="f" method="POST" action="${target}/add" enctype="text/plain" target="sink"><input name='${body.slice(0, -1)},"x":"' value='"}'></form>
      <iframe name="sink"></iframe>
      <script>
        window.done = fetch(${JSON.stringify(`${target}/add`)}, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: ${JSON.stringify(body)} })
          // CORP same-origin makes the opaque answer a network error; the request went out all the same.
          .catch(() => undefined)
          .then(() => fetch(${JSON.stringify(`${target}/pause`)}, { method: 'PUT', mode: 'no-cors' }).catch(() => undefined))
          .then(() => { document.getElementById('f').submit(); return 'sent'; }, (e) => String(e));
      </script></body>`;
    attacker = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerUrl = `http://localhost:${(attacker.address() as AddressInfo).port}/`;
    const port = new URL(server.url).port;
    browser = await launchChromium([
      // DNS rebinding, settled: rebound.example now resolves to the dashboard's address.
      `--host-resolver-rules=MAP rebound.example 127.0.0.1`,
    ]);
    expect(port).not.toBe('');
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

  it('a cross-site page cannot add a run or pause the queue', async () => {
    const page = await browser.newPage();
    await page.goto(attackerUrl);
    expect(await page.evaluate(() => (globalThis as unknown as { done: Promise<string> }).done)).toBe('sent');
    await page.waitForTimeout(500);
    expect(await runs.count()).toBe(0);
    expect(await runs.isPaused()).toBe(false);
    await page.close();
  });

  it('a rebound page (its own origin, Host rebound.example) cannot read or change the dashboard', async () => {
    const page = await browser.newPage();
    const origin = `http://rebound.example:${new URL(server.url).port}`;
    const first = await page.goto(`${origin}/`);
    expect(first?.status()).toBe(421);
    const result = await page.evaluate(async (base) => {
      const list = await fetch(`${base}/queues/api/queues`);
      const pause = await fetch(`${base}/queues/api/queues/runs/pause`, { method: 'PUT' });
      return { list: list.status, pause: pause.status };
    }, origin);
    expect(result).toEqual({ list: 421, pause: 421 });
    expect(await runs.isPaused()).toBe(false);
    await page.close();
  });

  it("the dashboard's own page may pause the queue (same origin, as bull-board's buttons do)", async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/queues`);
    const status = await page.evaluate(
      async () => (await fetch('/queues/api/queues/runs/pause', { method: 'PUT' })).status,
    );
    expect(status).toBe(200);
    expect(await runs.isPaused()).toBe(true);
    await runs.resume();
    await page.close();
  });
});
