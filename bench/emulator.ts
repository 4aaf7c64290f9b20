/**
 * Emulator throughput, in one process over real HTTP: batch creates of 1,000-row batches,
 * 1,000-row list pages (plain, and filtered + sorted on utime as an incremental read
 * does), and single-row lookups through a unique field (what an idempotent sync does per
 * record). Prints one JSON object.
 *
 *   node bench/emulator.ts [rows]      (default 100000)
 */
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { startEmulator } from '../src/emulator/start-emulator.ts';

const ROWS = Number(process.argv[2] ?? 100_000);
const BATCH = 1000;
const LOOKUPS = 2000;

const emulator = await startEmulator();
const agent = new Agent({ connections: 4, keepAliveTimeout: 30_000 });
const app = emulator.createApp({ name: 'Bench' });
const headers = { 'APP-Appkey': app.appKey, 'APP-Sign': app.sign, 'content-type': 'application/json' };
const sheet = emulator.createWorksheet(app.appId, {
  name: 'Orders',
  fields: [
    { name: 'Order no', alias: 'orderNo', type: 'Text', isTitle: true, required: true, isUnique: true },
    { name: 'Customer', alias: 'customer', type: 'Text' },
    { name: 'Email', alias: 'email', type: 'Email' },
    { name: 'Amount', alias: 'amount', type: 'Currency' },
    { name: 'Quantity', alias: 'qty', type: 'Number' },
    {
      name: 'Status',
      alias: 'status',
      type: 'SingleSelect',
      options: [
        { value: 'New', index: 1 },
        { value: 'Paid', index: 2 },
      ],
    },
    { name: 'Ordered', alias: 'ordered', type: 'DateTime' },
    { name: 'Gift', alias: 'gift', type: 'Checkbox' },
  ],
});
const statusKeys = sheet.fields.find((f) => f.alias === 'status')!.options!.map((o) => o.key);
const rowsPath = `${emulator.url}/v3/app/worksheets/${sheet.id}/rows`;

async function post(
  url: string,
  body: unknown,
): Promise<{ error_code: number; error_msg: string; data: unknown }> {
  const res = await request(url, { method: 'POST', headers, body: JSON.stringify(body), dispatcher: agent });
  const answer = (await res.body.json()) as { error_code: number; error_msg: string; data: unknown };
  if (answer.error_code !== 1)
    throw new Error(`bench request failed: ${answer.error_code} ${answer.error_msg}`);
  return answer;
}

function row(n: number): { fields: Array<{ id: string; value: unknown }> } {
  return {
    fields: [
      { id: 'orderNo', value: `ORD-${n}` },
      { id: 'customer', value: `Customer ${n % 997}` },
      { id: 'email', value: `c${n}@example.com` },
      { id: 'amount', value: (n % 10_000) / 100 },
      { id: 'qty', value: n % 17 },
      { id: 'status', value: [statusKeys[n % 2]] },
      { id: 'ordered', value: '2024-03-25 15:52:58' },
      { id: 'gift', value: n % 5 === 0 },
    ],
  };
}

let started = performance.now();
for (let offset = 0; offset < ROWS; offset += BATCH) {
  const size = Math.min(BATCH, ROWS - offset);
  await post(`${rowsPath}/batch`, {
    rows: Array.from({ length: size }, (_, i) => row(offset + i)),
    triggerWorkflow: false,
  });
}
const createSeconds = (performance.now() - started) / 1000;

started = performance.now();
let listed = 0;
for (let page = 1; listed < ROWS; page += 1) {
  const answer = await post(`${rowsPath}/list`, { pageSize: BATCH, pageIndex: page });
  const count = (answer.data as { rows: unknown[] }).rows.length;
  if (count === 0) break;
  listed += count;
}
const listSeconds = (performance.now() - started) / 1000;

// An incremental read: filtered on utime and sorted by it, paged to the end.
started = performance.now();
let scanned = 0;
for (let page = 1; scanned < ROWS; page += 1) {
  const answer = await post(`${rowsPath}/list`, {
    pageSize: BATCH,
    pageIndex: page,
    filter: { type: 'condition', field: 'utime', operator: 'ge', value: '2000-01-01 00:00:00' },
    sorts: [{ field: 'utime', isAsc: true }],
  });
  const count = (answer.data as { rows: unknown[] }).rows.length;
  if (count === 0) break;
  scanned += count;
}
const sortedSeconds = (performance.now() - started) / 1000;

started = performance.now();
for (let i = 0; i < LOOKUPS; i += 1) {
  const n = Math.floor((i * 7919) % ROWS);
  await post(`${rowsPath}/list`, {
    pageSize: 10,
    pageIndex: 1,
    filter: { type: 'condition', field: 'orderNo', operator: 'eq', value: `ORD-${n}` },
  });
}
const lookupSeconds = (performance.now() - started) / 1000;

const result = {
  rows: ROWS,
  batchSize: BATCH,
  batchCreateRowsPerSec: Math.round(ROWS / createSeconds),
  listRowsPerSec: Math.round(listed / listSeconds),
  filteredSortedListRowsPerSec: Math.round(scanned / sortedSeconds),
  uniqueLookupsPerSec: Math.round(LOOKUPS / lookupSeconds),
  rssMb: Math.round(process.memoryUsage().rss / 1024 / 1024),
  stored: emulator.state.rowCount(sheet.id),
};
process.stdout.write(`${JSON.stringify(result)}\n`);
await agent.close();
await emulator.close();
