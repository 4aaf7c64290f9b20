import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadiness } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import type { RunRecord, RunReport } from '../../src/sync/state/run-store.ts';
import { ORDERS_WITH_STATUS } from '../helpers/orders-status-sheet.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const XSS = '<script>window.__xss=1</script>';

const JOB = `name: orders
source: { type: csv, path: ./orders.csv }
target: { worksheet: orders, mode: append, batchSize: 10, triggerWorkflow: false }
fields:
  order_no: Order Number
  status: { from: Status }
`;

describe('dashboard pages', () => {
  let h: Harness;
  let metrics: Metrics;
  let server: OpsServer;
  let run: { record: RunRecord; report: RunReport };

  beforeAll(async () => {
    h = await createHarness('ops-dashboard');
    h.createWorksheet(ORDERS_WITH_STATUS);
    await h.writeFile('orders.csv', `Order Number,Status\nA-1,New\nA-2,${XSS}\nA-3,Paid\n`);
    await h.writeJob('orders', JOB);
    run = await h.runJob('orders');
    metrics = createMetrics(undefined, { defaultMetrics: false });
    server = await startOpsServer({
      rt: h.rt,
      metrics,
      readiness: createReadiness(),
      port: 0,
      dashboard: true,
    });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await metrics?.close();
    await h?.close();
  });

  async function page(path: string): Promise<{ status: number; body: string; type: string | null }> {
    const res = await fetch(`${server.url}${path}`);
    return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
  }

  it('lists the finished run with its counts and a link to it', async () => {
    expect(run.report).toMatchObject({ created: 2, deadLetteredTotal: 1 });
    const { status, body, type } = await page('/');
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/html/);
    expect(body).toContain(`href="/runs/${run.record.runId}"`);
    const row = body.slice(body.indexOf(`href="/runs/${run.record.runId}"`));
    expect(row).toMatch(/<span class="badge completed">completed<\/span>/);
    // read 3, created 2, ..., dead-lettered 1 (linked to the run's dead letters)
    expect(row).toMatch(/<td class="n">3<\/td>\s*<td class="n">2<\/td>/);
    expect(row).toContain(`<a href="/runs/${run.record.runId}#dead-letters">1</a>`);
  });

  it('shows the run report and its dead letter with position, field and the escaped reason', async () => {
    const { status, body } = await page(`/runs/${run.record.runId}`);
    expect(status).toBe(200);
    expect(body).toMatch(/<th>Created<\/th>\s*<td class="n">2<\/td>/);
    expect(body).toMatch(/<th>Dead-lettered<\/th>\s*<td class="n">1<\/td>/);
    expect(body).toContain('invalid-row: 1');
    expect(body).toContain('<td data-label="Position">line 3</td>');
    expect(body).toContain('<code>status</code>');
    expect(body).toContain('&lt;script&gt;window.__xss=1&lt;/script&gt;');
    expect(body).not.toContain(XSS);
  });

  it('lists dead letters by category, narrows to one, and escapes values in text and links', async () => {
    await h.rt.deadLetters.add([
      {
        id: 'evil-run:0',
        job: 'evil"><img src=x onerror=alert(1)>',
        runId: 'evil-run',
        category: 'conflict',
        message: 'duplicate <b>bold</b> & "quoted"',
        source: { data: {}, position: { index: 0 } },
        attempts: 1,
      },
    ]);
    const all = await page('/dead-letters');
    expect(all.status).toBe(200);
    expect(all.body).toContain('all: 2');
    expect(all.body).toContain('href="/dead-letters?category=invalid-row">invalid-row: 1</a>');
    expect(all.body).toContain('href="/dead-letters?category=conflict">conflict: 1</a>');
    expect(all.body).toContain('duplicate &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot;');
    expect(all.body).toContain('evil&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
    expect(all.body).not.toMatch(/<img src=x/);
    expect(all.body).toContain('href="/queues/queue/batches"');

    const one = await page('/dead-letters?category=invalid-row');
    expect(one.body).toContain(`<a href="/runs/${run.record.runId}">${run.record.runId}</a>`);
    expect(one.body).not.toContain('evil-run');
  });

  it('answers a bad category with 400 naming the categories, an unknown run with 404', async () => {
    const bad = await page('/dead-letters?category=%3Cb%3Enope');
    expect(bad.status).toBe(400);
    expect(bad.body).toContain(
      'unknown dead-letter category &quot;&lt;b&gt;nope&quot;; categories: throttled, transient',
    );
    const cursor = await page(`/runs/${run.record.runId}?cursor=garbage`);
    expect(cursor.status).toBe(400);
    expect(cursor.body).toContain('query parameter &quot;cursor&quot;');
    const missing = await page('/runs/no-such-run');
    expect(missing.status).toBe(404);
    expect(missing.body).toContain('No run &quot;no-such-run&quot;');
  });

  it('serves bull-board for both queues beside the pages', async () => {
    const ui = await page('/queues');
    expect(ui.status).toBe(200);
    expect(ui.body).toContain('rowbridge');
    const res = await fetch(`${server.url}/queues/api/queues`);
    expect(res.status).toBe(200);
    const { queues } = (await res.json()) as {
      queues: Array<{ name: string; counts: Record<string, number> }>;
    };
    expect(queues.map((q) => q.name).sort()).toEqual(['batches', 'runs']);
    expect(queues.find((q) => q.name === 'runs')?.counts.completed).toBe(1);
  });
});
