/**
 * Issue 26 and 27 §1 on the job page, in Debian's chromium: the last webhook calls of a
 * job (queued N, duplicate, refused with its reason) and the notifications its channels
 * did not take (time, channel name, error), never the channel's URL. The calls are real
 * POSTs to /hooks/JOB; the failure is a real run's notification refused by a local server.
 */
import type { Worker } from 'bullmq';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadiness } from '../../src/ops/health.ts';
import { createHookMetrics } from '../../src/ops/hooks/hook-metrics.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import type { NotifyJobData } from '../../src/queue/notify-queue.ts';
import { createNotifyWorker } from '../../src/queue/notify-worker.ts';
import { launchChromium } from '../helpers/browser.ts';
import { until } from '../helpers/cli-process.ts';
import { HOOK_TOKEN } from '../helpers/hook-server.ts';
import { startRecordingServer } from '../helpers/recording-server.ts';
import type { RecordingServer } from '../helpers/recording-server.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const CHANNEL_TOKEN = 'chat-robot-token-5f2e9a';

describe('the job page shows its webhook calls and undelivered notifications', () => {
  let h: Harness;
  let alerts: RecordingServer;
  let notifier: Worker<NotifyJobData>;
  let metrics: Metrics;
  let server: OpsServer;
  let browser: Browser;
  let page: Page;

  const post = (headers: Record<string, string>, body: unknown) =>
    fetch(`${server.url}/hooks/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    alerts = await startRecordingServer();
    alerts.respond(() => ({ status: 500, body: 'robot disabled' }));
    h = await createHarness(
      'dash-activity',
      {},
      { ROWBRIDGE_HOOK_TOKEN: HOOK_TOKEN, ALERTS_URL: `${alerts.url}/robot/${CHANNEL_TOKEN}` },
    );
    h.createWorksheet({
      name: 'Orders',
      alias: 'orders',
      fields: [{ name: 'No', alias: 'no', type: 'Text', required: true, isTitle: true }],
    });
    await h.writeJob(
      'orders',
      `name: orders
source: { type: worksheet, worksheet: incoming }
target: { worksheet: orders, mode: upsert, key: no }
fields: { no: no }
trigger: { webhook: true }
`,
    );
    // The source file does not exist: every run fails, and notifies.
    await h.writeJob(
      'ledger',
      `name: ledger
source: { type: csv, path: ./missing.csv }
target: { worksheet: orders, mode: upsert, key: no }
fields: { no: no }
notify:
  - { type: slack, url: "\${ALERTS_URL}", on: [failed] }
`,
    );
    metrics = createMetrics(undefined, { defaultMetrics: false });
    server = await startOpsServer({
      rt: h.rt,
      metrics,
      readiness: createReadiness(),
      port: 0,
      dashboard: true,
      hooks: { metrics: createHookMetrics(metrics.registry) },
    });
    notifier = createNotifyWorker(h.rt);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
    page.on('pageerror', (err) => {
      throw err;
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await notifier?.close();
    await server?.close();
    await metrics?.close();
    await h?.close();
    await alerts?.close();
  });

  it('lists the last calls: queued, duplicate and refused with the reason', async () => {
    const auth = { authorization: `Bearer ${HOOK_TOKEN}` };
    expect((await post({ ...auth, 'x-rowbridge-delivery': 'dlv-1' }, { rowIds: ['r1', 'r2'] })).status).toBe(
      202,
    );
    expect((await post({ ...auth, 'x-rowbridge-delivery': 'dlv-1' }, { rowIds: ['r1', 'r2'] })).status).toBe(
      200,
    );
    expect((await post({ authorization: 'Bearer wrong-token-0000000000' }, { rowId: 'r3' })).status).toBe(
      401,
    );
    expect((await post({ ...auth, 'x-rowbridge-delivery': 'dlv-3' }, { nope: 1 })).status).toBe(400);

    await page.goto(`${server.url}/jobs/orders`);
    const rows = page.locator('table.hooks tbody tr');
    expect(await rows.count()).toBe(4);
    const text = async (i: number) => ((await rows.nth(i).textContent()) ?? '').replace(/\s+/g, ' ');
    // Newest first.
    expect(await text(0)).toMatch(/dlv-3 refused 400 .*nope/);
    expect(await text(1)).toMatch(/refused 401/);
    expect(await text(2)).toMatch(/dlv-1 duplicate/);
    expect(await text(3)).toMatch(/dlv-1 queued 2/);
    expect(await page.content()).not.toContain('wrong-token');
    await page.locator('table.hooks').screenshot({ path: '/tmp/ops-job-hooks.png' });
  });

  it('lists a notification its channel refused, by channel name, without the URL', async () => {
    expect((await h.runJob('ledger')).record.status).toBe('failed');
    await until(() => alerts.requests.length > 0, 20_000, 'the notification to be sent');
    await page.goto(`${server.url}/jobs/ledger`);
    const rows = page.locator('table.notify-failures tbody tr');
    await until(
      async () => {
        await page.reload();
        return (await rows.count()) > 0;
      },
      20_000,
      'the failure on the page',
    );
    const row = ((await rows.first().textContent()) ?? '').replace(/\s+/g, ' ');
    expect(row).toContain('job:0 slack');
    expect(row).toContain('failed');
    expect(row).toContain('answered HTTP 500');
    const content = await page.content();
    expect(content).not.toContain(CHANNEL_TOKEN);
    expect(content).not.toContain(alerts.url);
    await page.screenshot({ path: '/tmp/ops-job-activity.png', fullPage: true });
  });
});
