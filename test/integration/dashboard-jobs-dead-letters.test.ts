/**
 * Issue 13, point 2: dead letters a person can fix. The dead-letters page filters by
 * job, category, field and error code (in chromium, through its form), pages through a
 * narrowed list without losing or repeating an entry, and its download button serves
 * the `dlq export --csv` file for the filter, formula-safe, which `dlq replay --file`
 * reads back. Entries are added to the real store the way the batch writer adds them.
 */
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadiness } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import { readFixedCsv } from '../../src/sync/state/dead-letter-csv.ts';
import type { DeadLetterInput } from '../../src/sync/state/dead-letter-entry.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { launchChromium } from '../helpers/browser.ts';

const SHOTS = path.resolve('test-artifacts', 'dashboard-jobs');

/** 130 `amount` rejections (code 30005) among 100 `status` ones, and 5 transient failures of another job. */
function entries(): DeadLetterInput[] {
  const out: DeadLetterInput[] = [];
  // Recent: entries older than the retention (90 days) are pruned as others are added.
  const base = Date.now() - 3_600_000;
  for (let i = 0; i < 230; i += 1) {
    const amount = i % 23 < 13;
    out.push({
      id: `orders-r1:${i}`,
      job: 'orders',
      runId: 'orders-r1',
      category: 'invalid-row',
      ...(amount ? { errorCode: 30005 } : {}),
      field: amount ? 'amount' : 'status',
      message: amount ? `amount: "${i}x" is not a number` : 'status: "Bogus" is not an option (New, Paid)',
      source: {
        data: { 'Order Number': `A-${i}`, Amount: i === 0 ? '=HYPERLINK("http://evil.example")' : `${i}x` },
        position: { index: i, line: i + 2 },
      },
      attempts: 1,
      createdAt: new Date(base + i * 1000).toISOString(),
    });
  }
  for (let i = 0; i < 5; i += 1) {
    out.push({
      id: `stock-r1:${i}`,
      job: 'stock',
      runId: 'stock-r1',
      category: 'transient',
      errorCode: 30005,
      field: 'amount',
      message: 'the platform answered 503 after every retry',
      source: { data: { sku: `S-${i}` }, position: { index: i } },
      attempts: 6,
      createdAt: new Date(base + 500_000 + i * 1000).toISOString(),
    });
  }
  return out;
}

describe('the dead-letters page filters and downloads what a person fixes', () => {
  let h: Harness;
  let metrics: Metrics;
  let server: OpsServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    h = await createHarness('dash-dlq');
    expect(await h.rt.deadLetters.add(entries())).toBe(235);
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
    page = await browser.newPage({ viewport: { width: 1400, height: 900 }, acceptDownloads: true });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await metrics?.close();
    await h?.close();
  });

  const listed = async () => page.locator('table.dead-letters tbody tr td:last-child code').allTextContents();

  it('narrows by job, category, field and code through the form, and pages without loss', async () => {
    await page.goto(`${server.url}/dead-letters`);
    await page.getByLabel('Job').selectOption('orders');
    await page.getByLabel('Category').selectOption('invalid-row');
    await page.getByLabel('Field').selectOption('amount');
    await page.getByLabel('Code').selectOption('30005');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/field=amount/);
    expect(await page.locator('h1').textContent()).toBe(
      'Dead letters: category invalid-row, job orders, field amount, code 30005',
    );
    await page.screenshot({ path: path.join(SHOTS, 'dead-letters-filtered.png') });
    const seen = await listed();
    expect(seen.length).toBeGreaterThanOrEqual(100);
    await page.getByRole('link', { name: 'Next page' }).click();
    seen.push(...(await listed()));
    expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(0);
    // Every amount rejection of orders once; no status one, none of stock.
    const expected = entries()
      .filter((e) => e.job === 'orders' && e.field === 'amount')
      .map((e) => e.id);
    expect(seen.sort()).toEqual(expected.sort());

    await page.goto(`${server.url}/dead-letters?field=amount&code=30005&category=transient`);
    expect(await listed()).toEqual(['stock-r1:4', 'stock-r1:3', 'stock-r1:2', 'stock-r1:1', 'stock-r1:0']);
    expect((await page.goto(`${server.url}/dead-letters?code=abc`))?.status()).toBe(400);
  });

  it('downloads the filtered dead letters as the formula-safe CSV that replay reads back', async () => {
    await page.goto(`${server.url}/dead-letters?job=orders&field=amount&code=30005`);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('dead-letters-orders-amount.csv');
    const file = path.join(SHOTS, 'dead-letters-orders-amount.csv');
    await download.saveAs(file);
    const csv = await readFile(file, 'utf8');
    const lines = csv.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      '_dlq_id,_dlq_job,_dlq_category,_dlq_code,_dlq_field,_dlq_position,_dlq_reason,Order Number,Amount',
    );
    expect(lines).toHaveLength(131);
    // The cell a spreadsheet would run is text; reading the file back restores it.
    expect(csv).toContain(`"'=HYPERLINK(""http://evil.example"")"`);
    const rows = readFixedCsv(csv, file);
    expect(rows.find((r) => r.id === 'orders-r1:0')?.data.Amount).toBe('=HYPERLINK("http://evil.example")');
    expect(rows.every((r) => r.id.startsWith('orders-r1:'))).toBe(true);
  });
});
