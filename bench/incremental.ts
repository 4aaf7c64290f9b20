/**
 * Requests and seconds of a small change on a big worksheet (issue 23 §1): an upsert
 * after 3 changed rows, and a replay of one dead letter, against the same change made
 * with `--full` (the "before" baseline: the whole worksheet is read, as every run did).
 *
 * An in-process emulator and a rowbridge runtime on Redis (test/helpers/sync-harness.ts).
 * The worksheet is filled with `--rows` rows before rowbridge runs, so the first run
 * adopts them (`adopt`: a full scan, the report says `first-run`). Then 3 rows change
 * and the job runs with `--full` (`fullBaseline`); 3 other rows change and it runs as
 * usual (`incremental`); a row the mapping refuses is dead-lettered, the job is fixed
 * and that one entry replayed (`replay`). Last, a pull of the worksheet into a CSV file
 * with `incremental: { cursor: _updatedAt }` runs once whole (`pullFirst`), 2 rows are
 * edited on the worksheet, and it runs again (`pullIncremental`). Requests are those the emulator received
 * during each run; seconds are wall time of the run in this process (they move with the
 * machine's load: compare within one session). `goals` checks the figures:
 * incremental ≤ 5 requests, replay ≤ 3, incremental pull of 2 changed rows ≤ 3, and
 * `verified` that the worksheet holds each key once with the changed values and the
 * pulled file every row once with the 2 edits.
 *
 * Usage: node bench/incremental.ts [--rows 200000]
 * Prints one JSON object on stdout.
 */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseNumberFlags } from './lib/bench-flags.ts';
import { enqueueRun } from '../src/queue/enqueue-run.ts';
import type { EnqueueOptions } from '../src/queue/enqueue-run.ts';
import { createHarness } from '../test/helpers/sync-harness.ts';
import type { Harness } from '../test/helpers/sync-harness.ts';

const flags = parseNumberFlags('bench/incremental.ts', { rows: { default: 200_000 } });
const ROWS = flags.rows;

type Row = { no: string; amount: string; status: string };
const csv = (rows: readonly Row[]) =>
  ['order_no,amount,status', ...rows.map((r) => `${r.no},${r.amount},${r.status}`)].join('\n') + '\n';
const jobYaml = (fields: string) => `name: orders
source: { type: csv, path: ./orders.csv }
target: { worksheet: orders, mode: upsert, key: order_no, batchSize: 1000, triggerWorkflow: false }
fields: { ${fields} }
`;
const PULL_JOB = `name: orders-pull
source: { type: worksheet, worksheet: orders }
sink: { type: csv, path: ./orders-pull.csv, key: order_no }
fields: { order_no: order_no, status: status }
incremental: { cursor: _updatedAt }
`;

/** One run, measured at the emulator. */
async function measure(h: Harness, start: () => Promise<string>) {
  const before = h.emulator.requests.length;
  const started = performance.now();
  const { record, report } = await h.waitForRun(await start(), 3_600_000);
  const seconds = Number(((performance.now() - started) / 1000).toFixed(2));
  if (record.status !== 'completed')
    throw new Error(`run ${record.runId} ${record.status}: ${record.message}`);
  return {
    requests: h.emulator.requests.length - before,
    seconds,
    read: report.read,
    updated: report.updated,
    created: report.created,
    ...(report.keyMatch === undefined
      ? {}
      : { keyMatch: `${report.keyMatch.scan ? 'scan' : 'index'}: ${report.keyMatch.reason}` }),
  };
}

// The platform stamps _updatedAt to the second: the pull's edits are moved a minute on,
// so they fall after the cursor the first pull saved, whatever the machine's speed.
// The push runs are stamped two minutes back: a pull saves no cursor past its scan's
// start less a minute (worksheet-source.ts), so rows changed in the minute before the
// first pull would be read again by the second; here, as on a schedule, the pull comes
// more than a minute after them, and the second pull reads the 2 edits only.
let skewMs = -120_000;
const h = await createHarness(
  'bench-incremental',
  { requestLogLimit: 10_000_000, now: () => Date.now() + skewMs },
  {
    ROWBRIDGE_RATE: '2000',
    ROWBRIDGE_MAX_RATE: '5000',
  },
);
try {
  const ws = h.createWorksheet({
    name: 'Orders',
    alias: 'orders',
    fields: [
      { name: 'Order number', alias: 'order_no', type: '2', required: true, isTitle: true },
      { name: 'Amount', alias: 'amount', type: '6' },
      { name: 'Status', alias: 'status', type: '2' },
    ],
  });
  const rows: Row[] = Array.from({ length: ROWS }, (_, i) => ({
    no: `O-${String(i).padStart(7, '0')}`,
    amount: String(10 + (i % 97)),
    status: i % 2 === 0 ? 'New' : 'Paid',
  }));
  const client = h.rt.clientFor();
  for (let i = 0; i < ROWS; i += 1000) {
    await client.rows.batchCreate(ws, {
      triggerWorkflow: false,
      rows: rows.slice(i, i + 1000).map((r) => ({
        fields: [
          { id: 'order_no', value: r.no },
          { id: 'amount', value: Number(r.amount) },
          { id: 'status', value: r.status },
        ],
      })),
    });
  }
  process.stderr.write(`worksheet filled with ${ROWS} rows\n`);
  await h.writeJob('orders', jobYaml('order_no: order_no, amount: amount, status: status'));
  h.startWorkers();
  const run = async (options: Partial<EnqueueOptions> = {}) => {
    await h.writeFile('orders.csv', csv(rows));
    return measure(h, () => enqueueRun(h.rt, 'orders', { trigger: 'cli', ...options }));
  };
  const change = (at: readonly number[], status: string) => {
    for (const i of at) rows[i] = { ...rows[i]!, status };
  };

  const adopt = await run();
  change([7, Math.floor(ROWS / 2), ROWS - 1], 'Shipped');
  const fullBaseline = await run({ full: true });
  change([8, Math.floor(ROWS / 2) + 1, ROWS - 2], 'Shipped');
  const incremental = await run();

  rows.push({ no: 'X-1', amount: 'ten', status: 'New' });
  await run();
  const dead: string[] = [];
  for await (const e of h.rt.deadLetters.iterate({ job: 'orders' })) dead.push(e.id);
  await h.writeJob('orders', jobYaml('order_no: order_no, status: status'));
  const replay = await measure(h, () =>
    enqueueRun(h.rt, 'orders', { trigger: 'replay', replayIds: dead.slice(0, 1) }),
  );

  await h.writeJob('orders-pull', PULL_JOB);
  skewMs = 0;
  const pull = () => measure(h, () => enqueueRun(h.rt, 'orders-pull', { trigger: 'cli' }));
  const pullFirst = await pull();
  skewMs += 60_000;
  const edited = h.emulator.state.rows(ws).filter((_, i) => i === 11 || i === Math.floor(ROWS / 3));
  await client.rows.batchUpdate(ws, {
    rowIds: edited.map((r) => r.id),
    fields: [{ id: 'status', value: 'Pulled' }],
    triggerWorkflow: false,
  });
  skewMs += 60_000;
  const pullIncremental = await pull();

  const landed = new Map<string, number>();
  for (const r of h.emulator.state.rows(ws)) {
    const no = String(r.values.order_no);
    landed.set(no, (landed.get(no) ?? 0) + 1);
  }
  const shipped = new Set(
    h.emulator.state
      .rows(ws)
      .filter((r) => r.text.status === 'Shipped')
      .map((r) => String(r.values.order_no)),
  );
  const verified =
    dead.length === 1 &&
    landed.size === rows.length &&
    [...landed.values()].every((n) => n === 1) &&
    rows.every((r) => (r.status === 'Shipped') === shipped.has(r.no));
  const pulled = (await readFile(path.join(h.dir, 'orders-pull.csv'), 'utf8')).trim().split('\n').slice(1);
  const pulledKeys = new Set(pulled.map((line) => line.split(',')[0]));
  const pulledEdits = pulled.filter((line) => line.endsWith(',Pulled')).map((line) => line.split(',')[0]);
  const pullVerified =
    pulled.length === landed.size &&
    pulledKeys.size === landed.size &&
    pullIncremental.read === 2 &&
    pulledEdits.sort().join() ===
      edited
        .map((r) => String(r.values.order_no))
        .sort()
        .join();

  console.log(
    JSON.stringify(
      {
        rows: ROWS,
        adopt,
        fullBaseline,
        incremental,
        replay,
        pullFirst,
        pullIncremental,
        goals: {
          incrementalAtMost5: incremental.requests <= 5,
          replayAtMost3: replay.requests <= 3,
          pullIncrementalAtMost3: pullIncremental.requests <= 3,
        },
        verified: verified && pullVerified,
        loadAverage1m: Number(loadavg()[0]!.toFixed(1)),
      },
      null,
      2,
    ),
  );
} finally {
  await h.close();
}
