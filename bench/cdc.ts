/**
 * Change capture (issue 26 §2): end-to-end lag at a steady 50 changes/s, and memory while
 * a 100,000-change backlog is read against a throttling platform.
 *
 * A private PostgreSQL (wal_level=logical, test/helpers/private-postgres.ts), the
 * in-process emulator and a runtime on Redis (test/helpers/sync-harness.ts), the consumer
 * of src/queue/cdc-consumer.ts in follow mode.
 * - `lag`: `--seconds` (default 20) of 5 inserts every 100 ms (50/s), each its own
 *   transaction; per change, milliseconds from its commit to its batch written; p50/p95/max.
 * - `backlog`: the consumer stopped, `--backlog` changes (default 100000) committed in
 *   transactions of 1,000, the emulator throttled to `--rate` requests/s (default 5,
 *   error 51 past it); the consumer started again and watched for `--watch` seconds
 *   (default 30): the largest RSS and heap, and how many changes it wrote meanwhile.
 *   RSS includes the emulator, which lives in the same process.
 *
 * Usage: node bench/cdc.ts [--seconds 20] [--backlog 100000] [--rate 5] [--watch 30]
 * Prints one JSON object on stdout.
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { parseNumberFlags } from './lib/bench-flags.ts';
import { cdcSourceOf, runCdcConsumer } from '../src/queue/cdc-consumer.ts';
import { setupCdc } from '../src/sync/cdc/cdc-admin.ts';
import { startPrivatePostgres } from '../test/helpers/private-postgres.ts';
import { createHarness } from '../test/helpers/sync-harness.ts';

const flags = parseNumberFlags('bench/cdc.ts', {
  seconds: { default: 20 },
  backlog: { default: 100_000 },
  rate: { default: 5 },
  watch: { default: 30 },
});

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return Math.round(sorted[at] ?? 0);
}

const pgs = await startPrivatePostgres();
const h = await createHarness(
  'bench-cdc',
  {},
  { ORDERS_DB: pgs.urlAs('cdc_user'), ROWBRIDGE_LOG_LEVEL: 'warn' },
);
try {
  await pgs.query('CREATE ROLE cdc_user LOGIN REPLICATION');
  await pgs.query(
    'CREATE TABLE public.orders (id serial PRIMARY KEY, order_no text UNIQUE NOT NULL, amount int)',
  );
  await pgs.query('ALTER TABLE public.orders OWNER TO cdc_user');
  await pgs.query('GRANT CREATE ON DATABASE postgres TO cdc_user');
  h.createWorksheet({
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
source: { type: postgres-cdc, urlEnv: ORDERS_DB, table: public.orders, keyColumn: id, slot: rowbridge_orders, publication: rowbridge_orders }
target: { worksheet: orders, mode: upsert, key: order_no, deletes: true }
fields: { order_no: order_no, amount: amount }
`,
  );
  const admin = new pg.Client({ connectionString: pgs.urlAs('cdc_user') });
  await admin.connect();
  await setupCdc(admin, cdcSourceOf((await h.rt.loadJob('orders')).spec));
  await admin.end();

  // Lag at 50 changes/s.
  const lags: number[] = [];
  let stop = new AbortController();
  let consumer = runCdcConsumer(h.rt, {
    job: 'orders',
    mode: 'follow',
    holder: 'bench',
    signal: stop.signal,
    onWritten: (changes) => {
      const now = Date.now();
      for (const c of changes) if (c.commitTime !== undefined) lags.push(now - c.commitTime);
    },
  });
  const writer = new pg.Client({ connectionString: pgs.url });
  await writer.connect();
  let n = 0;
  const until = Date.now() + flags.seconds * 1000;
  while (Date.now() < until) {
    const started = Date.now();
    await writer.query(
      `INSERT INTO orders (order_no, amount) SELECT 'L-' || (${n} + g), g FROM generate_series(1, 5) g`,
    );
    n += 5;
    await new Promise((r) => setTimeout(r, Math.max(0, 100 - (Date.now() - started))));
  }
  const deadline = Date.now() + 30_000;
  while (lags.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  stop.abort();
  await consumer;

  // Memory with a backlog, the platform throttled.
  for (let done = 0; done < flags.backlog; done += 1000) {
    const size = Math.min(1000, flags.backlog - done);
    await writer.query(
      `INSERT INTO orders (order_no, amount) SELECT 'B-' || (${done} + g), g FROM generate_series(1, ${size}) g`,
    );
  }
  await writer.end();
  h.emulator.setOptions({ rateLimit: { requestsPerSecond: flags.rate, burst: flags.rate } });
  global.gc?.();
  const before = process.memoryUsage();
  let written = 0;
  let peakRss = 0;
  let peakHeap = 0;
  stop = new AbortController();
  consumer = runCdcConsumer(h.rt, {
    job: 'orders',
    mode: 'follow',
    holder: 'bench',
    signal: stop.signal,
    onWritten: (changes) => (written += changes.length),
  });
  const end = Date.now() + flags.watch * 1000;
  while (Date.now() < end) {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
    await new Promise((r) => setTimeout(r, 250));
  }
  stop.abort();
  await consumer;
  const mb = (b: number) => Math.round((b / 1_048_576) * 10) / 10;
  console.log(
    JSON.stringify({
      loadAverage: loadavg().map((x) => Math.round(x * 10) / 10),
      lag: {
        changes: lags.length,
        perSecond: 50,
        p50Ms: quantile(lags, 0.5),
        p95Ms: quantile(lags, 0.95),
        maxMs: quantile(lags, 1),
      },
      backlog: {
        changes: flags.backlog,
        platformRate: flags.rate,
        watchedSeconds: flags.watch,
        writtenMeanwhile: written,
        rssBeforeMb: mb(before.rss),
        peakRssMb: mb(peakRss),
        peakHeapUsedMb: mb(peakHeap),
      },
    }),
  );
} finally {
  await h.close();
  await pgs.stop();
}
