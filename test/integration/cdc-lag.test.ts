/**
 * A change stream's lag, as an operator sees it from any process: a consumer streams in
 * this process and saves its lag in Redis; `/metrics` (an ops server), the job page of
 * the dashboard and `rowbridge status` (a CLI process of its own) read it. While the
 * platform throttles every write the oldest pending change ages past
 * ROWBRIDGE_CDC_LAG_WARN_SECONDS (1 s here) and its WAL past _BYTES (4 kiB): each place
 * warns; once the platform answers again the lag falls to 0 and the warning goes.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createReadiness } from '../../src/ops/health.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Metrics } from '../../src/ops/metrics.ts';
import { startOpsServer } from '../../src/ops/ops-server.ts';
import type { OpsServer } from '../../src/ops/ops-server.ts';
import { cdcSourceOf, runCdcConsumer } from '../../src/queue/cdc-consumer.ts';
import { setupCdc } from '../../src/sync/cdc/cdc-admin.ts';
import { createCdcState } from '../../src/sync/cdc/cdc-state.ts';
import { killChildren, spawnCli, until } from '../helpers/cli-process.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { startPrivatePostgres } from '../helpers/private-postgres.ts';
import type { PrivatePostgres } from '../helpers/private-postgres.ts';

let pgs: PrivatePostgres;
let h: Harness;
let ws: string;
let metrics: Metrics;
let server: OpsServer;
const children: ChildProcess[] = [];
const stop = new AbortController();
let consumer: Promise<unknown> | undefined;

beforeAll(async () => {
  pgs = await startPrivatePostgres();
  await pgs.query(`CREATE ROLE cdc_user LOGIN REPLICATION`);
  await pgs.query(
    `CREATE TABLE public.orders (id serial PRIMARY KEY, order_no text UNIQUE NOT NULL, amount int)`,
  );
  await pgs.query(`ALTER TABLE public.orders OWNER TO cdc_user`);
  await pgs.query(`GRANT CREATE ON DATABASE postgres TO cdc_user`);
  h = await createHarness(
    'cdc-lag',
    {},
    {
      ORDERS_DB: pgs.urlAs('cdc_user'),
      ROWBRIDGE_CDC_LAG_WARN_SECONDS: '1',
      ROWBRIDGE_CDC_LAG_WARN_BYTES: '4096',
    },
  );
  ws = h.createWorksheet({
    name: 'Orders',
    alias: 'orders',
    fields: [
      { name: 'Order no', alias: 'order_no', type: '2', required: true, isTitle: true },
      { name: 'Amount', alias: 'amount', type: '6' },
    ],
  });
  await h.writeJob(
    'orders',
    `name: orders
source: { type: postgres-cdc, urlEnv: ORDERS_DB, table: public.orders, keyColumn: id, slot: rowbridge_lag, publication: rowbridge_lag }
target: { worksheet: orders, mode: upsert, key: order_no }
fields: { order_no: order_no, amount: amount }
`,
  );
  const admin = new pg.Client({ connectionString: pgs.urlAs('cdc_user') });
  await admin.connect();
  await setupCdc(admin, cdcSourceOf((await h.rt.loadJob('orders')).spec));
  await admin.end();
  metrics = createMetrics(undefined, { defaultMetrics: false });
  metrics.collectFrom(h.rt);
  server = await startOpsServer({
    rt: h.rt,
    metrics,
    readiness: createReadiness(),
    port: 0,
    dashboard: true,
  });
}, 60_000);

afterAll(async () => {
  killChildren(children);
  stop.abort();
  await consumer?.catch(() => undefined);
  await server?.close();
  await metrics?.close();
  await h?.close();
  await pgs?.stop();
});

const throttleAll = () => h.emulator.setOptions({ rateLimit: { requestsPerSecond: 0.001, burst: 1 } });
const lift = () => h.emulator.setOptions({ rateLimit: undefined });
const scrape = async () => (await metrics.render()).body;
const series = (body: string, name: string) =>
  Number(new RegExp(`^${name}\\{job="orders"\\} (\\S+)$`, 'm').exec(body)?.[1] ?? NaN);
const jobPage = async () => (await fetch(`${server.url}/jobs/orders`)).text();

describe('the lag of a change stream', () => {
  it('shows on /metrics, the job page and in status, with a warning over the thresholds', async () => {
    const state = createCdcState({ redis: h.rt.redis, prefix: h.rt.statePrefix });
    consumer = runCdcConsumer(h.rt, {
      job: 'orders',
      mode: 'follow',
      holder: 'lag-test',
      flushMs: 50,
      heartbeatMs: 500,
      signal: stop.signal,
    });
    await until(async () => (await state.status('orders'))?.state === 'streaming', 60_000, 'the stream');

    throttleAll();
    await pgs.query(
      `INSERT INTO orders (order_no, amount) SELECT 'L-' || g, g FROM generate_series(1, 200) g`,
    );
    // Seconds are worked out at each scrape, bytes as of the consumer's last report (2 s).
    let stuck = '';
    await until(
      async () => {
        stuck = await scrape();
        return (
          series(stuck, 'rowbridge_cdc_lag_seconds') > 2 && series(stuck, 'rowbridge_cdc_lag_bytes') > 4096
        );
      },
      60_000,
      'the lag to grow',
    );
    expect(series(stuck, 'rowbridge_cdc_lag_warning')).toBe(1);

    const page = await jobPage();
    expect(page).toContain('<h2>Change capture</h2>');
    expect(page).toMatch(/by <code>lag-test<\/code>/);
    expect(page).toMatch(/lag \d+(\.\d)? s is over ROWBRIDGE_CDC_LAG_WARN_SECONDS \(1 s\)/);
    expect(page).toContain('of WAL is over ROWBRIDGE_CDC_LAG_WARN_BYTES (4.0 kiB)');

    const status = await spawnCli(h, children, ['status']).exited;
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(
      /change capture:\n {2}orders: streaming by lag-test, lag [\d.]+ \w*B, [\d.]+ s/,
    );
    expect(status.stdout).toMatch(
      /WARNING orders: lag \d+(\.\d)? s is over ROWBRIDGE_CDC_LAG_WARN_SECONDS \(1 s\)/,
    );
    const json = JSON.parse((await spawnCli(h, children, ['status', '--json']).exited).stdout) as Array<{
      run: { trigger?: string };
      cdcLag?: { seconds: number; warnings: string[] };
    }>;
    const cdcRun = json.find((r) => r.run.trigger === 'cdc');
    expect(cdcRun?.cdcLag?.seconds).toBeGreaterThan(1);
    expect(cdcRun?.cdcLag?.warnings.length).toBeGreaterThan(0);

    // The platform answers again: the rows land, the lag falls to 0 and the warning goes.
    lift();
    await until(() => h.emulator.state.rows(ws).length === 200, 60_000, 'the rows to land');
    await until(
      async () => {
        const body = await scrape();
        return (
          series(body, 'rowbridge_cdc_lag_seconds') === 0 && series(body, 'rowbridge_cdc_lag_warning') === 0
        );
      },
      60_000,
      'the lag to fall to 0',
    );
    expect(await jobPage()).not.toContain('is over ROWBRIDGE_CDC_LAG_WARN_SECONDS');
    const caughtUp = await spawnCli(h, children, ['status']).exited;
    expect(caughtUp.stdout).toMatch(/orders: streaming by lag-test, lag [\d.]+ \w*B, 0 s/);
    expect(caughtUp.stdout).not.toContain('WARNING');
  }, 180_000);
});
