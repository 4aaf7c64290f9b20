import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadiness } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import type { DeadLetterEntry } from '../../src/sync/state/dead-letter-entry.ts';
import type { RunRecord, RunReport } from '../../src/sync/state/run-store.ts';
import { ORDERS_WITH_STATUS } from '../helpers/orders-status-sheet.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { launchChromium } from '../helpers/browser.ts';

const JOB = `name: orders
source: { type: csv, path: ./orders.csv }
target: { worksheet: orders, mode: append, batchSize: 10, triggerWorkflow: false }
fields:
  order_no: Order Number
  status: { from: Status }
`;

describe('dashboard in a headless browser', () => {
  let h: Harness;
  let metrics: Metrics;
  let server: OpsServer;
  let browser: Browser;
  let page: Page;
  let shots: string;
  let run: { record: RunRecord; report: RunReport };
  let dead: DeadLetterEntry;

  beforeAll(async () => {
    h = await createHarness('ops-browser');
    h.createWorksheet(ORDERS_WITH_STATUS);
    await h.writeFile(
      'orders.csv',
      'Order Number,Status\nA-1,New\nA-2,<script>window.__xss=1</script>\nA-3,Paid\n',
    );
    await h.writeJob('orders', JOB);
    run = await h.runJob('orders');
    const { entries } = await h.rt.deadLetters.list({ runId: run.record.runId });
    expect(entries).toHaveLength(1);
    dead = entries[0]!;
    metrics = createMetrics(undefined, { defaultMetrics: false });
    server = await startOpsServer({
      rt: h.rt,
      metrics,
      readiness: createReadiness(),
      port: 0,
      dashboard: true,
    });
    shots = await mkdtemp(path.join(tmpdir(), 'rowbridge-dashboard-shots-'));
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await metrics?.close();
    await h?.close();
  });

  it('shows the finished run on the runs page and its dead letter on the dead-letters page', async () => {
    await page.goto(`${server.url}/`);
    const runLink = page.getByRole('link', { name: run.record.runId });
    expect(await runLink.isVisible()).toBe(true);
    const row = page.locator('table.runs tbody tr', { has: runLink });
    expect(await row.locator('.badge').textContent()).toBe('completed');
    await page.screenshot({ path: path.join(shots, 'runs.png'), fullPage: true });

    await page.goto(`${server.url}/dead-letters`);
    const reason = page.locator('table.dead-letters td.reason');
    expect(await reason.count()).toBe(1);
    expect(await reason.first().textContent()).toBe(dead.message);
    expect(dead.message).toContain('<script>window.__xss=1</script>');
    expect(await reason.first().isVisible()).toBe(true);
    // The reason is shown as text: the script in it never ran.
    expect(await page.evaluate(() => (globalThis as { __xss?: unknown }).__xss)).toBeUndefined();
    await page.screenshot({ path: path.join(shots, 'dead-letters.png'), fullPage: true });
  });

  it('clicks through from the runs list to the run report with its dead letter', async () => {
    await page.goto(`${server.url}/`);
    await page.getByRole('link', { name: run.record.runId }).click();
    await page.waitForURL(`**/runs/${run.record.runId}`);
    expect(await page.locator('h1').textContent()).toContain(run.record.runId);
    const created = page.locator('table.report tr', { hasText: 'Created' }).locator('td');
    expect(await created.textContent()).toBe(String(run.report.created));
    const entry = page.locator('table.dead-letters tbody tr');
    expect(await entry.count()).toBe(1);
    expect(await entry.locator('td.reason').textContent()).toBe(dead.message);
    expect(await entry.locator('td', { hasText: /^line 3$/ }).count()).toBe(1);
    await page.screenshot({ path: path.join(shots, 'run.png'), fullPage: true });
  });

  it('renders bull-board with both queues', async () => {
    await page.goto(`${server.url}/queues`);
    await page.getByText('batches', { exact: true }).first().waitFor({ state: 'visible' });
    expect(await page.getByText('runs', { exact: true }).first().isVisible()).toBe(true);
    await page.screenshot({ path: path.join(shots, 'queues.png'), fullPage: true });
    process.stdout.write(`dashboard screenshots in ${shots}\n`);
  });
});
