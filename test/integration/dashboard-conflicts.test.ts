/**
 * Issue 25, the dashboard's conflicts page in Debian's chromium: the open conflicts of a
 * real two-way job (a worksheet in the emulator, a PostgreSQL table) with both values and
 * the last synced one; resolved from the page (the table's value, or a value typed for
 * both sides) and written by the next run on both sides. A read-only dashboard shows no
 * buttons and refuses the POST; a writable one refuses it without the CSRF header.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { createReadiness } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import { launchChromium } from '../helpers/browser.ts';
import { pgQuery, PG_URL } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const SCHEMA = `dashtw_${process.pid}`;
const TABLE = `${SCHEMA}.people`;

describe('the conflicts page (issue 25)', { timeout: 120_000 }, () => {
  let h: Harness;
  let sheet: WorksheetStructure;
  let client: PlatformClient;
  let metrics: Metrics;
  let writable: OpsServer;
  let readOnly: OpsServer;
  let browser: Browser;
  let page: Page;

  const rowsByEmail = () => new Map(h.emulator.state.rows(sheet.id).map((r) => [r.text.email ?? '', r]));
  const noteInTable = async (email: string) =>
    (await pgQuery<{ note: string }>(`SELECT note FROM ${TABLE} WHERE email = '${email}'`))[0]?.note;
  const idOf = async (email: string) =>
    (await pgQuery<{ id: number }>(`SELECT id FROM ${TABLE} WHERE email = '${email}'`))[0]!.id;
  async function run(): Promise<void> {
    const { record } = await h.runJob('people');
    expect(record.status, record.message).toBe('completed');
  }

  beforeAll(async () => {
    h = await createHarness('dash-conflicts', {}, { DASHTW_DB: PG_URL });
    await pgQuery(
      `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`,
      `CREATE SCHEMA ${SCHEMA}`,
      `CREATE TABLE ${TABLE} (id serial PRIMARY KEY, email text, note text, tier text,
         updated_at timestamptz NOT NULL DEFAULT now())`,
      `INSERT INTO ${TABLE} (email, note, tier) SELECT 'p' || i || '@x.test', 'note ' || i, 'tier ' || i FROM generate_series(1, 5) i`,
    );
    sheet = h.emulator.createWorksheet(h.appId, {
      name: 'People',
      alias: 'people',
      fields: [
        { name: 'Email', alias: 'email', type: 'Text' },
        { name: 'Note', alias: 'note', type: 'Text' },
        { name: 'Tier', alias: 'tier', type: 'Text' },
      ],
    });
    client = h.rt.clientFor();
    await h.writeJob(
      'people',
      `name: people
source: { type: postgres, urlEnv: DASHTW_DB, table: ${TABLE}, keyColumn: id, updatedAtColumn: updated_at, allowPrivilegedSource: true }
target: { worksheet: people, mode: two-way, key: email, conflict: manual }
fields:
  email: email
  note: note
  tier: tier
`,
    );
    await run();
    expect(h.emulator.state.rows(sheet.id)).toHaveLength(5);
    // p2: one field edited on both sides; p3: two fields.
    const edit = (email: string, fields: Array<{ id: string; value: unknown }>) =>
      client.rows.update(sheet.id, rowsByEmail().get(email)!.id, { fields });
    await edit('p2@x.test', [{ id: 'note', value: 'sheet says 2' }]);
    await pgQuery(`UPDATE ${TABLE} SET note = 'table says 2' WHERE email = 'p2@x.test'`);
    await edit('p3@x.test', [
      { id: 'note', value: 'sheet note 3' },
      { id: 'tier', value: 'sheet tier 3' },
    ]);
    await pgQuery(
      `UPDATE ${TABLE} SET note = 'table note 3', tier = 'table tier 3' WHERE email = 'p3@x.test'`,
    );
    await run();

    metrics = createMetrics(undefined, { defaultMetrics: false });
    const serve = (allowWrites: boolean) =>
      startOpsServer({
        rt: h.rt,
        metrics,
        readiness: createReadiness(),
        port: 0,
        dashboard: true,
        allowWrites,
      });
    writable = await serve(true);
    readOnly = await serve(false);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
    page.on('pageerror', (err) => {
      throw err;
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await writable?.close();
    await readOnly?.close();
    await metrics?.close();
    await h?.close();
    await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  });

  it('a read-only dashboard lists the conflicts with both values and refuses to resolve', async () => {
    const id2 = `people/fields:${await idOf('p2@x.test')}`;
    await page.goto(`${readOnly.url}/conflicts`);
    expect(await page.locator('section.conflict').count()).toBe(2);
    const p2 = page.locator(`section.conflict[data-conflict="${id2}"]`);
    const cells = await p2.locator('table.conflict-fields tbody tr td').allTextContents();
    expect(cells).toEqual(['note', '"sheet says 2"', '"table says 2"', '"note 2"']);
    expect(await p2.locator('dd.state').textContent()).toContain('open');
    expect(await page.locator('button[data-action]').count()).toBe(0);
    expect(await page.content()).toContain('--allow-writes');
    await page.screenshot({ path: '/tmp/ops-conflicts-read-only.png', fullPage: true });
    const refused = await fetch(
      `${readOnly.url}/conflicts/people/${encodeURIComponent(id2.split('/')[1]!)}/take-source`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-rowbridge-csrf': '1' },
        body: '{}',
      },
    );
    expect(refused.status).toBe(405);
  });

  it('resolves from the page: a typed value and the table side, written by the next run', async () => {
    const id2 = `people/fields:${await idOf('p2@x.test')}`;
    const id3 = `people/fields:${await idOf('p3@x.test')}`;
    // Another site's request (no CSRF header, no same-origin Origin) is refused.
    const forged = await fetch(
      `${writable.url}/conflicts/people/${encodeURIComponent(id3.split('/')[1]!)}/take-source`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      },
    );
    expect(forged.status).toBe(403);

    await page.goto(`${writable.url}/conflicts`);
    const p2 = page.locator(`section.conflict[data-conflict="${id2}"]`);
    const p3 = page.locator(`section.conflict[data-conflict="${id3}"]`);
    // Two fields: no single value can resolve it.
    expect(await p3.getByRole('button', { name: 'Set this value' }).count()).toBe(0);
    await p2.getByLabel('Value for both sides').fill('agreed 2');
    await p2.getByRole('button', { name: 'Set this value' }).click();
    await page.waitForLoadState('load');
    await page
      .locator(`section.conflict[data-conflict="${id2}"] dd.state`, { hasText: 'resolved' })
      .waitFor();
    expect(await page.locator(`section.conflict[data-conflict="${id2}"] dd.state`).textContent()).toContain(
      '"agreed 2" on both sides',
    );
    await page
      .locator(`section.conflict[data-conflict="${id3}"]`)
      .getByRole('button', { name: 'Take the table values' })
      .click();
    await page
      .locator(`section.conflict[data-conflict="${id3}"] dd.state`, { hasText: 'the table value' })
      .waitFor();
    await page.screenshot({ path: '/tmp/ops-conflicts-resolved.png', fullPage: true });
    // Stored, not written yet.
    expect(await noteInTable('p2@x.test')).toBe('table says 2');

    await run();
    expect(await noteInTable('p2@x.test')).toBe('agreed 2');
    expect(rowsByEmail().get('p2@x.test')?.text.note).toBe('agreed 2');
    expect(rowsByEmail().get('p3@x.test')?.text.note).toBe('table note 3');
    expect(rowsByEmail().get('p3@x.test')?.text.tier).toBe('table tier 3');
    expect(await noteInTable('p3@x.test')).toBe('table note 3');
    await page.goto(`${writable.url}/conflicts`);
    expect(await page.locator('section.conflict').count()).toBe(0);
    expect(await page.locator('main').textContent()).toContain('No conflicts.');
  });
});
