/**
 * Issue 13, point 1: the jobs page and a page per job, in Debian's chromium, against
 * real runs on the real Redis and the emulator. Screenshots go to test-artifacts/
 * (ignored by git) for a person to look at.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueues } from '../../src/queue/queues.ts';
import { registerSchedules } from '../../src/queue/schedules.ts';
import { createReadiness } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import { ORDERS_WITH_STATUS } from '../helpers/orders-status-sheet.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { launchChromium } from '../helpers/browser.ts';

const SHOTS = path.resolve('test-artifacts', 'dashboard-jobs');
const SECRET = 'hd-7f3a9c1e5b2d4f6a8c0e';

// Yearly: a scheduler that never fires while the test runs, but has a next run time.
const ORDERS = (status: string) => `name: orders
source: { type: csv, path: ./orders.csv }
target: { worksheet: orders, mode: upsert, key: order_no, batchSize: 10, triggerWorkflow: false }
fields:
  order_no: Order Number
  status: ${status}
schedule: '0 0 1 1 *'
`;
const BROKEN = `name: broken
source: { type: csv, path: ./missing.csv }
target: { worksheet: orders, mode: append, triggerWorkflow: false }
fields:
  order_no: Order Number
`;
const TICKETS = `name: tickets
source:
  type: http
  url: https://helpdesk.example.com/api/v2/tickets
  headers:
    Authorization: Bearer \${HELPDESK_TOKEN}
  itemsPath: tickets
target: { worksheet: orders, mode: append, triggerWorkflow: false }
fields:
  order_no: id
`;

describe('jobs pages in a headless browser', () => {
  let h: Harness;
  let metrics: Metrics;
  let server: OpsServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let throttledAnswers = 0;

  beforeAll(async () => {
    h = await createHarness('dash-jobs', {}, { HELPDESK_TOKEN: SECRET });
    h.createWorksheet(ORDERS_WITH_STATUS);
    await h.writeFile('orders.csv', 'Order Number,Status\nA-1,New\n=2+3,Bogus\nA-3,Paid\n');
    await h.writeJob('orders', ORDERS('{ from: Status }'));
    await h.writeJob('broken', BROKEN);
    await h.writeJob('tickets', TICKETS);
    await h.writeJob('invalid', 'name: invalid\nsource: { type: csv }\n');
    expect((await h.runJob('orders')).record.status).toBe('completed');
    // The second run meets a platform that throttles (error 51 past 2 requests/s). Its rows
    // are unchanged, and since issue 23 §1 such a run matches keys through the key index in
    // one request; --full makes it scan the worksheet, so it sends several and meets a 51.
    h.emulator.setOptions({ rateLimit: { requestsPerSecond: 2, burst: 1 } });
    const throttled = await h.runJob('orders', { full: true });
    h.emulator.setOptions({ rateLimit: undefined });
    expect(throttled.record.status).toBe('completed');
    expect(throttled.report.throttled).toBeGreaterThan(0);
    throttledAnswers = throttled.report.throttled;
    for (let i = 0; i < 3; i += 1) expect((await h.runJob('broken')).record.status).toBe('failed');
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
    await mkdir(SHOTS, { recursive: true });
    browser = await launchChromium();
    // The operator sits in Tokyo; the worker's clock is whatever the machine's is.
    context = await browser.newContext({ viewport: { width: 1400, height: 900 }, timezoneId: 'Asia/Tokyo' });
    page = await context.newPage();
    page.on('pageerror', (err) => {
      throw err;
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await metrics?.close();
    const queues = h === undefined ? undefined : createQueues(h.rt);
    await queues?.runs.removeJobScheduler('orders');
    await queues?.close();
    await h?.close();
  });

  const row = (job: string) => page.locator(`table.jobs tr[data-job="${job}"]`);

  it('lists every job with source, target, mode, schedule, last run, trends and health', async () => {
    await page.goto(`${server.url}/jobs`);
    expect(await page.locator('table.jobs tbody tr').count()).toBe(4);
    const orders = row('orders');
    expect(await orders.locator('td').nth(1).textContent()).toBe('csv ./orders.csv');
    expect(await orders.locator('td').nth(2).textContent()).toBe('worksheet orders');
    expect(await orders.locator('td').nth(3).textContent()).toBe('upsert');
    // The next run, 1 January 00:00 where the worker runs, read in the viewer's zone.
    const time = orders.locator('td.schedule time');
    const next = new Date((await time.getAttribute('datetime')) ?? '');
    const tokyo = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Asia/Tokyo',
      hour: '2-digit',
      minute: '2-digit',
      hour12: false,
    }).format(next);
    const shown = (await time.textContent()) ?? '';
    expect(shown).toContain(tokyo);
    expect(shown).toContain('GMT+9');
    expect(await orders.locator('td.schedule code').textContent()).toBe('0 0 1 1 *');
    expect(await orders.locator('td.last-run .badge').textContent()).toBe('completed');
    // Two runs: two rows created, then nothing changed; the bad row dead-lettered each time.
    expect(await orders.locator('td.rows-trend svg').getAttribute('data-values')).toBe('2,0');
    expect(await orders.locator('td.dead-trend svg').getAttribute('data-values')).toBe('1,1');
    expect(await orders.locator('td.health').textContent()).toContain('ok');

    const broken = row('broken');
    expect(await broken.locator('td.health .badge').textContent()).toBe('unhealthy');
    expect(await broken.locator('td.health').textContent()).toContain('3 failed in a row');
    expect(await broken.locator('td.last-run .badge').textContent()).toBe('failed');
    expect(await broken.locator('td.schedule').textContent()).toContain('manual');
    expect(await row('tickets').locator('td').nth(1).textContent()).toBe('http helpdesk.example.com');
    expect(await row('invalid').textContent()).toContain('invalid');
    await page.screenshot({ path: path.join(SHOTS, 'jobs.png'), fullPage: true });
  });

  it('shows a job page with its runs and charts, and the spec without the secret', async () => {
    await page.goto(`${server.url}/jobs`);
    await row('orders').getByRole('link', { name: 'orders' }).click();
    await page.waitForURL('**/jobs/orders');
    expect(await page.locator('table.runs tbody tr').count()).toBe(2);
    const charts = page.locator('figure.chart');
    // Rows/s, duration and requests per run (issue 23 §5 added the last two), throttled answers.
    expect(await charts.count()).toBe(4);
    expect((await charts.nth(0).locator('svg').getAttribute('data-values'))?.split(',')).toHaveLength(2);
    const throttledChart = charts.filter({ hasText: 'Throttled answers per run' });
    expect(await throttledChart.locator('svg').getAttribute('data-values')).toBe(`0,${throttledAnswers}`);
    expect(await throttledChart.locator('svg').getAttribute('aria-label')).toContain(
      `highest ${throttledAnswers} answers`,
    );
    expect(await page.locator('pre.spec').textContent()).toContain('schedule: 0 0 1 1 *');
    await page.screenshot({ path: path.join(SHOTS, 'job-orders.png'), fullPage: true });

    await page.goto(`${server.url}/jobs/tickets`);
    const spec = (await page.locator('pre.spec').textContent()) ?? '';
    expect(spec).toContain('Authorization: Bearer ${HELPDESK_TOKEN}');
    expect(await page.content()).not.toContain(SECRET);
    expect((await page.goto(`${server.url}/jobs/nope`))?.status()).toBe(404);
  });

  it('runs a job now, pauses and resumes its schedule, and replays its dead letters', async () => {
    await page.goto(`${server.url}/jobs/orders`);
    await page.getByRole('button', { name: 'Run now' }).click();
    const status = page.getByRole('status');
    await status.getByRole('link', { name: 'Open the run' }).waitFor();
    const runId = /Run (\S+) queued/.exec((await status.textContent()) ?? '')?.[1] ?? '';
    expect((await h.waitForRun(runId)).record.job).toBe('orders');

    await page.getByRole('button', { name: 'Pause schedule' }).click();
    await page.getByRole('button', { name: 'Resume schedule' }).waitFor();
    expect(await page.locator('dd.schedule .badge').textContent()).toBe('paused');
    const queues = createQueues(h.rt);
    try {
      expect((await queues.runs.getJobSchedulers()).map((s) => s.key)).toEqual([]);
      // A worker starting meanwhile keeps the pause.
      expect((await registerSchedules(h.rt)).registered).toEqual([]);
      await page.screenshot({ path: path.join(SHOTS, 'job-paused.png'), fullPage: true });
      await page.getByRole('button', { name: 'Resume schedule' }).click();
      await page.getByRole('button', { name: 'Pause schedule' }).waitFor();
      expect((await queues.runs.getJobSchedulers()).map((s) => s.key)).toEqual(['orders']);
    } finally {
      await queues.close();
    }

    // The operator fixes the mapping, then replays the dead letter from the page.
    await h.writeJob('orders', ORDERS('{ value: New }'));
    await page.reload();
    await page.getByRole('button', { name: 'Replay 1 dead letter' }).click();
    await status.getByRole('link', { name: 'Open the run' }).waitFor();
    const replayId = /as run (\S+)\./.exec((await status.textContent()) ?? '')?.[1] ?? '';
    const replay = await h.waitForRun(replayId);
    expect(replay.record.trigger).toBe('replay');
    expect(replay.report.created).toBe(1);
    expect(await h.rt.deadLetters.counts({ job: 'orders' })).toEqual({});
    await page.screenshot({ path: path.join(SHOTS, 'job-replayed.png'), fullPage: true });
    await writeFile(
      path.join(SHOTS, 'README.txt'),
      'Screenshots of test/integration/dashboard-jobs.test.ts\n',
    );
  }, 90_000);
});
