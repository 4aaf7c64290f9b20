/**
 * Issue 23 §5: the dashboard for the operator who keeps it open, in Debian's chromium
 * against real runs on the real Redis and the emulator. Screenshots of each page at
 * 1280 and 800 px wide go to /tmp/dashboard-*.png for a person to look at.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadiness } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import type { RunRecord, RunReport } from '../../src/sync/state/run-store.ts';
import { launchChromium } from '../helpers/browser.ts';
import { ORDERS_WITH_STATUS } from '../helpers/orders-status-sheet.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

type Run = { record: RunRecord; report: RunReport };

const ORDERS = `name: orders
source: { type: csv, path: ./orders.csv }
target: { worksheet: orders, mode: append, batchSize: 10, triggerWorkflow: false }
fields:
  order_no: Order Number
  status: { from: Status }
`;
const BROKEN = `name: broken
source: { type: csv, path: ./missing.csv }
target: { worksheet: orders, mode: append, triggerWorkflow: false }
fields:
  order_no: Order Number
`;
const TICKS = `name: ticks
source: { type: csv, path: ./ticks.csv }
target: { worksheet: orders, mode: upsert, key: order_no, batchSize: 2, triggerWorkflow: false }
fields:
  order_no: code
incremental: { cursor: seq }
`;

describe('the dashboard for the operator who keeps it open', () => {
  let h: Harness;
  let metrics: Metrics;
  let server: OpsServer;
  let browser: Browser;
  let wide: BrowserContext;
  let narrow: BrowserContext;
  let page: Page;
  let orders: Run;
  let broken: Run;
  const ticks: Run[] = [];

  async function shoot(name: string, url: string): Promise<void> {
    for (const [context, width] of [
      [wide, 1280],
      [narrow, 800],
    ] as const) {
      const shot = await context.newPage();
      await shot.goto(`${server.url}${url}`);
      const file = `/tmp/dashboard-${name}-${width}.png`;
      // A full-page capture now and then fails in headless chromium; the visible part will do.
      await shot.screenshot({ path: file, fullPage: true }).catch(() => shot.screenshot({ path: file }));
      await shot.close();
    }
  }

  beforeAll(async () => {
    h = await createHarness('dash-operator');
    h.createWorksheet(ORDERS_WITH_STATUS);
    await h.writeFile(
      'orders.csv',
      'Order Number,Status\nA-1,New\nA-2,Bogus\nA-3,Paid\nA-4,Unheard of\nA-5,New\n',
    );
    await h.writeFile('ticks.csv', 'code,seq\nT-1,1\nT-2,2\nT-3,3\n');
    await h.writeJob('orders', ORDERS);
    await h.writeJob('broken', BROKEN);
    await h.writeJob('ticks', TICKS);
    orders = await h.runJob('orders');
    expect(orders.report.deadLetteredTotal).toBe(2);
    broken = await h.runJob('broken');
    expect(broken.record.status).toBe('failed');
    ticks.push(await h.runJob('ticks'));
    await h.writeFile('ticks.csv', 'code,seq\nT-1,1\nT-2,2\nT-3,3\nT-4,4\n');
    ticks.push(await h.runJob('ticks'));
    expect(ticks.map((t) => `${t.record.status} ${t.record.message ?? ''}`)).toEqual([
      'completed ',
      'completed ',
    ]);
    metrics = createMetrics(undefined, { defaultMetrics: false });
    server = await startOpsServer({
      rt: h.rt,
      metrics,
      readiness: createReadiness(),
      port: 0,
      dashboard: true,
    });
    browser = await launchChromium();
    wide = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    narrow = await browser.newContext({ viewport: { width: 800, height: 900 } });
    page = await wide.newPage();
    page.on('pageerror', (err) => {
      throw err;
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await metrics?.close();
    await h?.close();
  });

  const listedRuns = () => page.locator('table.runs tbody tr td:first-child code').allTextContents();

  it('/runs lists every job’s runs newest first, a page at a time, narrowed by a status chosen from a list', async () => {
    const all = [orders, broken, ...ticks].map((r) => r.record.runId).reverse();
    await page.goto(`${server.url}/runs`);
    expect(await listedRuns()).toEqual(all);
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=failed/);
    expect(await listedRuns()).toEqual([broken.record.runId]);
    const choices = await page.getByLabel('Status').locator('option').allTextContents();
    expect(choices).toEqual(['all', 'queued', 'running', 'finalizing', 'completed', 'failed', 'skipped']);

    await page.goto(`${server.url}/runs?limit=3`);
    const seen = await listedRuns();
    await page.getByRole('link', { name: 'Older runs' }).click();
    seen.push(...(await listedRuns()));
    expect(await page.getByRole('link', { name: 'Older runs' }).count()).toBe(0);
    expect(seen).toEqual(all);
    // The old address of the runs list still leads there.
    await page.goto(`${server.url}/?job=ticks`);
    expect(new URL(page.url()).pathname).toBe('/runs');
    expect(await listedRuns()).toEqual([ticks[1]!.record.runId, ticks[0]!.record.runId]);
    await shoot('runs', '/runs');
  });

  it('a failed run shows its next step; a run with dead letters how to replay them', async () => {
    await page.goto(`${server.url}/runs/${broken.record.runId}`);
    const step = page.getByRole('region', { name: 'Next step' });
    const text = (await step.textContent())?.replace(/\s+/g, ' ') ?? '';
    expect(text).toContain(
      'Put the source file back where the job reads it, or fix its path in jobs/broken.yaml',
    );
    expect(text).toContain('Resumable: rowbridge run broken resumes it');
    await shoot('run-failed', `/runs/${broken.record.runId}`);

    await page.goto(`${server.url}/runs/${orders.record.runId}`);
    const replay = (await page.getByRole('region', { name: 'Next step' }).textContent())?.replace(
      /\s+/g,
      ' ',
    );
    expect(replay).toContain('Dead letters: 2 rows not written');
    expect(replay).toContain('rowbridge dlq replay --job orders');
    await shoot('run-dead-letters', `/runs/${orders.record.runId}`);

    // A clean run needs nothing.
    await page.goto(`${server.url}/runs/${ticks[0]!.record.runId}`);
    expect(await page.getByRole('region', { name: 'Next step' }).count()).toBe(0);
  });

  it('summarises dead letters by reason and offers the filters as choices', async () => {
    await page.goto(`${server.url}/dead-letters`);
    const reasons = page.locator('table.reasons tbody tr');
    expect(await reasons.count()).toBe(1);
    expect(await reasons.locator('td').first().textContent()).toBe('2');
    expect(await reasons.locator('td.where').textContent()).toBe('line 5, line 3');
    const reason = (await reasons.locator('td.why').textContent())?.replace(/\s+/g, ' ') ?? '';
    expect(reason).toContain('status (column Status): no option "…"; allowed: "New", "Paid"');
    expect(reason).not.toContain('Bogus');
    for (const label of ['Job', 'Category', 'Field', 'Code'])
      expect(await page.getByLabel(label).evaluate((el) => (el as { tagName: string }).tagName)).toBe(
        'SELECT',
      );
    expect(await page.getByLabel('Job').locator('option').allTextContents()).toEqual([
      'all',
      'broken',
      'orders',
      'ticks',
    ]);
    await page.getByLabel('Field').selectOption('status');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/field=status/);
    expect(await page.locator('table.dead-letters tbody tr').count()).toBe(2);
    await shoot('dead-letters', '/dead-letters');
  });

  it('keeps the dead-letter table readable at 800 px', async () => {
    const small = await narrow.newPage();
    await small.goto(`${server.url}/dead-letters`);
    expect(
      await small.evaluate(
        () =>
          (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
            .documentElement.scrollWidth,
      ),
    ).toBeLessThanOrEqual(800);
    const cell = small.locator('table.dead-letters td.reason').first();
    expect((await cell.boundingBox())?.width).toBeGreaterThan(600);
    expect(await small.locator('table.dead-letters td', { hasText: 'line 5' }).first().isVisible()).toBe(
      true,
    );
    await small.close();
  });

  it('charts an incremental job’s duration and requests per run, besides rows per second', async () => {
    await page.goto(`${server.url}/jobs/ticks`);
    const chart = (title: string) => page.locator('figure.chart', { hasText: title }).locator('svg');
    expect(await chart('Requests per run').getAttribute('data-values')).toBe(
      ticks.map((t) => t.report.requests).join(','),
    );
    const seconds = ticks.map((t) => t.report.durationMs / 1000);
    const drawn = (await chart('Duration per run').getAttribute('data-values'))?.split(',').map(Number);
    expect(drawn).toHaveLength(2);
    drawn?.forEach((value, i) => {
      expect(value).toBeCloseTo(seconds[i]!, 0);
    });
    expect(await chart('Rows written per second').count()).toBe(1);
    await shoot('job-incremental', '/jobs/ticks');
    await shoot('jobs', '/jobs');
  });

  it('bull-board leads back to the runs, jobs and dead letters', async () => {
    await page.goto(`${server.url}/queues`);
    const back = page.getByRole('navigation', { name: 'rowbridge' });
    await back.getByRole('link', { name: 'Runs' }).click();
    await page.waitForURL(`${server.url}/runs`);
    expect(await page.locator('h1').textContent()).toBe('Runs');
    await shoot('queues', '/queues');
  });

  it('refreshes a page while its run is going, not while the tab is hidden, and stops once it is done', async () => {
    const runId = 'orders-live-1';
    await h.rt.runs.create({ runId, job: 'orders', trigger: 'cli', status: 'running' });
    await h.rt.runs.update(runId, { startedAt: new Date().toISOString(), read: 10 });
    const live = await wide.newPage();
    await live.clock.install();
    const loads: string[] = [];
    live.on('request', (req) => {
      if (new URL(req.url()).pathname === `/runs/${runId}`) loads.push(req.url());
    });
    await live.goto(`${server.url}/runs/${runId}`);
    const read = live.locator('table.report tr', { hasText: 'Read' }).locator('td');
    expect(await read.textContent()).toBe('10');

    await h.rt.runs.update(runId, { read: 25 });
    await live.clock.runFor(5_500);
    await expect.poll(() => read.textContent()).toBe('25');
    expect(loads).toHaveLength(2);

    // Hidden: nothing asked, however long; back in view, it catches up at once.
    const show = (state: 'hidden' | 'visible') =>
      live.evaluate((to) => {
        const doc = (globalThis as unknown as { document: { dispatchEvent(event: Event): boolean } })
          .document;
        Object.defineProperty(doc, 'visibilityState', { configurable: true, get: () => to });
        doc.dispatchEvent(new Event('visibilitychange'));
      }, state);
    await show('hidden');
    await h.rt.runs.update(runId, { read: 40 });
    await live.clock.runFor(30_000);
    expect(loads).toHaveLength(2);
    await show('visible');
    await expect.poll(() => read.textContent()).toBe('40');

    await h.rt.runs.update(runId, { status: 'completed', finishedAt: new Date().toISOString() });
    await live.clock.runFor(5_500);
    await expect.poll(() => live.locator('h1 .badge').textContent()).toBe('completed');
    const settled = loads.length;
    await live.clock.runFor(60_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(loads).toHaveLength(settled);
    await live.close();

    // An idle page never asks.
    const idle = await wide.newPage();
    await idle.clock.install();
    const idleLoads: string[] = [];
    idle.on('request', (req) => idleLoads.push(req.url()));
    await idle.goto(`${server.url}/runs/${orders.record.runId}`);
    const first = idleLoads.length;
    await idle.clock.runFor(60_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(idleLoads).toHaveLength(first);
    await idle.close();
  });
});
