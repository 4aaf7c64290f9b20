/**
 * Write requests of an upsert against their floor (issue 12: a run's writes within
 * 1.05× of the floor).
 *
 * An in-process emulator and a rowbridge runtime on Redis (test/helpers/sync-harness.ts)
 * import `--rows` orders (batchSize `--batch-size`), then the CSV is changed and the
 * same upsert runs again: `--changed-pct` % of the rows change, half of those all the
 * same way (status → Shipped: one shared change set) and half each their own way (a
 * unique amount), and `--new-pct` % new rows are added; positions are drawn by a seeded
 * generator, so every run sees the same data. The second run's write requests are
 * counted at the emulator's request log (POST/PATCH/DELETE on rows; listing pages are
 * reads and counted apart as `indexRequests`).
 *
 * The floor, computed from the data: ceil(creates / batchSize), plus one batch PATCH per
 * distinct shared change set per `batchSize` rows, plus one PATCH per row whose change
 * set is unique. `ratio` = writes / floor; `withinLimit` says whether it is ≤ 1.05.
 * `verified` says the worksheet holds exactly the expected rows and values afterwards.
 * `upsertSeconds` is the second run's wall time (4 batch workers, in process; it moves
 * with the machine's load, so compare it within one session only).
 *
 * `--latency-ms` makes the emulator answer each request that much later (a platform is
 * not local), which is when requests in flight at once start to count.
 *
 * Usage: node bench/requests.ts [--rows 3000] [--batch-size 100] [--changed-pct 10] [--new-pct 5] [--latency-ms 0]
 * Prints one JSON object on stdout.
 */
import { loadavg } from 'node:os';
import { parseNumberFlags } from './lib/bench-flags.ts';
import { createHarness } from '../test/helpers/sync-harness.ts';

const LIMIT = 1.05;
const flags = parseNumberFlags('bench/requests.ts', {
  rows: { default: 3000 },
  'batch-size': { default: 100 },
  'changed-pct': { default: 10, min: 0, fractional: true },
  'new-pct': { default: 5, min: 0, fractional: true },
  'latency-ms': { default: 0, min: 0 },
});
const rows = flags.rows;
const batchSize = flags['batch-size'];

/** mulberry32: a small seeded generator, so the mix is the same on every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

type Row = { no: string; amount: string; status: string };
const csv = (list: Row[]) =>
  ['order_no,amount,status', ...list.map((r) => `${r.no},${r.amount},${r.status}`)].join('\n') + '\n';

const base: Row[] = Array.from({ length: rows }, (_, i) => ({
  no: `O-${String(i).padStart(7, '0')}`,
  amount: String(10 + (i % 97)),
  status: i % 2 === 0 ? 'New' : 'Paid',
}));

// Which rows change: a seeded shuffle of the positions, the first `changed` of them.
const random = seeded(12);
const order = base.map((_, i) => i);
for (let i = order.length - 1; i > 0; i -= 1) {
  const j = Math.floor(random() * (i + 1));
  [order[i], order[j]] = [order[j]!, order[i]!];
}
const changed = Math.round((rows * flags['changed-pct']) / 100);
const shared = Math.floor(changed / 2);
const next: Row[] = base.map((r) => ({ ...r }));
for (const [n, i] of order.slice(0, changed).entries()) {
  const row = next[i]!;
  if (n < shared) row.status = 'Shipped';
  else row.amount = String(100_000 + n);
}
// New rows go in at seeded positions among the old ones.
const creates = Math.round((rows * flags['new-pct']) / 100);
for (let n = 0; n < creates; n += 1) {
  const at = Math.floor(random() * next.length);
  next.splice(at, 0, { no: `N-${String(n).padStart(7, '0')}`, amount: '5', status: 'New' });
}

const unique = changed - shared;
const floor = Math.ceil(creates / batchSize) + (shared > 1 ? Math.ceil(shared / batchSize) : shared) + unique;

const latency = flags['latency-ms'];
const h = await createHarness(
  `bench-requests`,
  latency > 0 ? { faults: { seed: 1, latencyMs: [latency, latency] } } : {},
  { ROWBRIDGE_RATE: '2000', ROWBRIDGE_MAX_RATE: '5000' },
);
try {
  const ws = h.createWorksheet({
    name: 'Orders',
    alias: 'orders',
    fields: [
      { name: 'Order number', alias: 'order_no', type: '2', required: true, isTitle: true },
      { name: 'Amount', alias: 'amount', type: '6' },
      {
        name: 'Status',
        alias: 'status',
        type: '11',
        options: ['New', 'Paid', 'Shipped'].map((value, i) => ({ value, index: i + 1 })),
      },
    ],
  });
  await h.writeJob(
    'orders',
    `name: orders
source: { type: csv, path: ./orders.csv }
target: { worksheet: orders, mode: upsert, key: order_no, batchSize: ${batchSize}, triggerWorkflow: false }
fields:
  order_no: order_no
  amount: amount
  status: status
`,
  );
  await h.writeFile('orders.csv', csv(base));
  const first = await h.runJob('orders', {});
  if (first.record.status !== 'completed') throw new Error(`import failed: ${first.record.message}`);

  await h.writeFile('orders.csv', csv(next));
  const before = h.emulator.requests.length;
  const started = performance.now();
  const second = await h.runJob('orders', {});
  const upsertSeconds = (performance.now() - started) / 1000;
  const log = h.emulator.requests.slice(before);
  const rowWrite = (r: { method: string; path: string }) =>
    /\/rows(\/|$)/.test(r.path) && r.method !== 'GET' && !r.path.endsWith('/rows/list');
  const writes = log.filter(rowWrite);
  const count = (pred: (r: { method: string; path: string }) => boolean) => writes.filter(pred).length;

  const landed = new Map(h.emulator.state.rows(ws).map((r) => [String(r.values.order_no), r.text]));
  const verified =
    second.record.status === 'completed' &&
    landed.size === next.length &&
    next.every((r) => {
      const got = landed.get(r.no);
      return got !== undefined && Number(got.amount) === Number(r.amount) && got.status === r.status;
    });

  process.stdout.write(
    JSON.stringify({
      rows,
      batchSize,
      changed,
      sharedChangeSet: shared,
      uniqueChangeSets: unique,
      creates,
      writes: writes.length,
      floor,
      ratio: Number((writes.length / floor).toFixed(3)),
      limit: LIMIT,
      withinLimit: writes.length / floor <= LIMIT,
      batchCreates: count((r) => r.method === 'POST' && r.path.endsWith('/rows/batch')),
      singleCreates: count((r) => r.method === 'POST' && !r.path.endsWith('/rows/batch')),
      batchUpdates: count((r) => r.method === 'PATCH' && r.path.endsWith('/rows/batch')),
      singleUpdates: count((r) => r.method === 'PATCH' && !r.path.endsWith('/rows/batch')),
      indexRequests: log.filter((r) => r.path.endsWith('/rows/list')).length,
      batchJobs: second.report.batches,
      upsertSeconds: Number(upsertSeconds.toFixed(2)),
      report: {
        created: second.report.created,
        updated: second.report.updated,
        unchanged: second.report.unchanged,
        deadLetteredTotal: second.report.deadLetteredTotal,
      },
      verified,
      loadAverage1m: Number(loadavg()[0]!.toFixed(1)),
    }) + '\n',
  );
} finally {
  await h.close();
}
