/**
 * Webhook latency (issue 26 §1): how fast `POST /hooks/JOB` answers at 200 calls/s on
 * loopback, and how long a single hint takes to land on an idle emulator.
 *
 * An in-process emulator, a rowbridge runtime with workers on Redis and the ops server
 * with the hook endpoint (test/helpers/sync-harness.ts, hook-server.ts); the job copies a
 * worksheet into another (upsert by key, default debounce 300 ms).
 * - `accept`: `--calls` hints (default 1000) sent one every 5 ms (200/s), each naming a
 *   row; milliseconds from sending to the 202, p50/p99. The workers write meanwhile.
 * - `landed`: `--hints` single hints (default 50), one at a time on an idle system: a
 *   row is created in the source, its hint sent, and the target polled every 10 ms until
 *   the row is there; milliseconds p50/p95/max, and how many landed within 2 s.
 *
 * Usage: node bench/hooks.ts [--calls 1000] [--hints 50]
 * Prints one JSON object on stdout.
 */
import { loadavg } from 'node:os';
import { parseNumberFlags } from './lib/bench-flags.ts';
import { HOOK_TOKEN, startHookServer } from '../test/helpers/hook-server.ts';
import { createHarness } from '../test/helpers/sync-harness.ts';

const flags = parseNumberFlags('bench/hooks.ts', { calls: { default: 1000 }, hints: { default: 50 } });

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return Number((sorted[at] ?? 0).toFixed(1));
}

const h = await createHarness(
  'bench-hooks',
  { requestLogLimit: 1_000_000 },
  { ROWBRIDGE_HOOK_TOKEN: HOOK_TOKEN },
);
try {
  const fields = [
    { name: 'No', alias: 'no', type: 'Text', required: true, isTitle: true },
    { name: 'Amount', alias: 'amount', type: 'Text' },
  ];
  const source = h.createWorksheet({ name: 'Incoming', alias: 'incoming', fields });
  const target = h.createWorksheet({ name: 'Orders', alias: 'orders', fields });
  await h.writeJob(
    'copy',
    `name: copy
source: { type: worksheet, worksheet: incoming }
target: { worksheet: orders, mode: upsert, key: no }
fields: { no: no, amount: amount }
trigger: { webhook: true }
`,
  );
  h.startWorkers();
  const hooks = await startHookServer(h);
  const client = h.rt.clientFor();
  const create = async (values: string[]) => {
    const ids: string[] = [];
    for (let i = 0; i < values.length; i += 1000) {
      const { rowIds } = await client.rows.batchCreate(source, {
        rows: values.slice(i, i + 1000).map((no) => ({ fields: [{ id: 'no', value: no }] })),
        triggerWorkflow: false,
      });
      ids.push(...rowIds);
    }
    return ids;
  };
  const landedRows = () => new Set(h.emulator.state.rows(target).map((r) => r.values.no));

  // Accept latency at 200 calls/s.
  const ids = await create(Array.from({ length: flags.calls }, (_, i) => `A-${i}`));
  const accept: number[] = [];
  const refused: number[] = [];
  const started = performance.now();
  await Promise.all(
    ids.map(async (id, i) => {
      const due = started + i * 5;
      await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
      const t0 = performance.now();
      const answer = await hooks.post('copy', { rowId: id });
      accept.push(performance.now() - t0);
      if (answer.status !== 202) refused.push(answer.status);
    }),
  );
  const sendSeconds = (performance.now() - started) / 1000;
  const deadline = Date.now() + 120_000;
  while (landedRows().size < flags.calls && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 2000));

  // Hint to landed, one at a time on an idle system.
  const landed: number[] = [];
  for (let i = 0; i < flags.hints; i += 1) {
    const no = `L-${i}`;
    const [id] = await create([no]);
    const t0 = performance.now();
    const answer = await hooks.post('copy', { rowId: id });
    if (answer.status !== 202) throw new Error(`hint ${i}: ${answer.status} ${JSON.stringify(answer.body)}`);
    while (!landedRows().has(no)) {
      if (performance.now() - t0 > 30_000) throw new Error(`hint ${i} did not land within 30 s`);
      await new Promise((r) => setTimeout(r, 10));
    }
    landed.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 200));
  }
  await hooks.close();
  process.stdout.write(
    `${JSON.stringify(
      {
        bench: 'hooks',
        accept: {
          calls: flags.calls,
          callsPerSecond: Number((flags.calls / sendSeconds).toFixed(1)),
          p50Ms: quantile(accept, 0.5),
          p99Ms: quantile(accept, 0.99),
          maxMs: quantile(accept, 1),
          notAccepted: refused.length,
          rowsLanded: landedRows().size >= flags.calls,
        },
        landed: {
          hints: flags.hints,
          p50Ms: quantile(landed, 0.5),
          p95Ms: quantile(landed, 0.95),
          maxMs: quantile(landed, 1),
          within2s: landed.filter((ms) => ms <= 2000).length,
        },
        goals: {
          landedP95Within2s: quantile(landed, 0.95) <= 2000,
          acceptWithin10s: quantile(accept, 1) < 10_000,
        },
        loadavg: loadavg().map((l) => Number(l.toFixed(2))),
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await h.close();
}
