import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import type { CreateWorksheetInput } from '../../src/api/types.ts';

const STATUSES = ['New', 'Paid', 'Shipped', 'Cancelled'] as const;
const CUSTOMERS = [
  'Acme GmbH',
  'Globex Corporation',
  '"Müller, Hans"',
  'Initech Ltd.',
  'Soylent & Co',
  '"O\'Brien ""Paddy"" Ltd"',
  'Umbrella KK',
  'Stark Industries',
  'Wayne Enterprises',
  'Zhang San Trading',
] as const;

/**
 * What the benchmark imports into: the orders worksheet the sync tests use, with a
 * customer column added. `worksheet` is the structure to create; `jobYaml` a job spec mapping
 * the CSV that {@link writeOrdersCsv} writes onto it.
 */
export interface OrdersFixture {
  worksheet: CreateWorksheetInput;
  jobYaml(options: { jobName: string; batchSize: number; csvPath: string }): string;
}

/** The orders worksheet and its job spec (append mode: the import path, no key lookups). */
export function createOrdersFixture(): OrdersFixture {
  return {
    worksheet: {
      name: 'Orders',
      alias: 'orders',
      fields: [
        { name: 'Order number', alias: 'order_no', type: '2', required: true, isTitle: true },
        { name: 'Customer', alias: 'customer', type: '2' },
        { name: 'Amount', alias: 'amount', type: '6' },
        {
          name: 'Status',
          alias: 'status',
          type: '11',
          options: STATUSES.map((value, i) => ({ value, index: i + 1 })),
        },
        { name: 'Placed', alias: 'placed', type: '15' },
      ],
    },
    jobYaml: ({ jobName, batchSize, csvPath }) => `name: ${jobName}
source: { type: csv, path: ${JSON.stringify(csvPath)} }
target:
  worksheet: orders
  mode: append
  batchSize: ${batchSize}
  triggerWorkflow: false
fields:
  order_no: Order Number
  customer: { from: Customer }
  amount: { from: Total }
  status: { from: Status }
  placed: { from: Date, format: DD/MM/YYYY }
`,
  };
}

/**
 * Writes `rows` order lines to `file` as CSV (quoted customers with commas and quotes,
 * status texts in mixed case, dates as DD/MM/YYYY), streaming with back-pressure so a
 * million rows never sit in memory. Resolves to the file size in bytes.
 */
export async function writeOrdersCsv(file: string, rows: number): Promise<number> {
  const out = createWriteStream(file);
  const chunk: string[] = ['Order Number,Customer,Total,Status,Date'];
  let bytes = 0;
  const flush = async (): Promise<void> => {
    const text = `${chunk.join('\n')}\n`;
    chunk.length = 0;
    bytes += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, 'drain');
  };
  for (let i = 0; i < rows; i += 1) {
    const status = STATUSES[i % STATUSES.length]!;
    const day = String((i % 28) + 1).padStart(2, '0');
    const month = String((Math.floor(i / 28) % 12) + 1).padStart(2, '0');
    const amount = (((i * 7919) % 100_000) / 100 + 1).toFixed(2);
    chunk.push(
      `SO-${String(i + 1).padStart(8, '0')},${CUSTOMERS[i % CUSTOMERS.length]!},${amount},${i % 5 === 0 ? status.toLowerCase() : status},${day}/${month}/${2020 + (i % 6)}`,
    );
    if (chunk.length >= 10_000) await flush();
  }
  if (chunk.length > 0) await flush();
  out.end();
  await once(out, 'finish');
  return bytes;
}
