/**
 * Writes the quickstart's sample data: `orders.csv` (3,000 realistic orders, five of
 * them deliberately bad) and `bad-rows.json` (which lines are bad and why, so
 * `npm start` can tell the expected dead letters from a real problem).
 *
 * The output is committed; run this only to change the sample:
 * `node jobs/examples/quickstart/generate-orders.ts`. A seeded PRNG keeps it stable.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** One deliberately bad row: the CSV line it is on and what makes it bad. */
export interface BadRow {
  line: number;
  orderNo: string;
  field: string;
  problem: string;
}

const ROWS = 3000;
const HERE = path.dirname(fileURLToPath(import.meta.url));

function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = mulberry32(20260315);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

const FIRST = [
  'Anna',
  'Ben',
  'Chloé',
  'David',
  'Elif',
  'Farid',
  'Greta',
  'Hiro',
  'Ines',
  'Jonas',
  'Kasia',
  'Liam',
  'Maya',
  'Noah',
  'Olga',
  'Pedro',
  'Rosa',
  'Sven',
  'Tara',
  'Yusuf',
];
const LAST = [
  'Schmidt',
  'Novak',
  'García',
  'Rossi',
  'Dubois',
  'Jansen',
  'Kowalski',
  'Svensson',
  'Yilmaz',
  'Murphy',
  "O'Brien",
  'Silva',
  'Fischer',
  'Lambert',
  'Horvat',
  'Berg',
];
const COMPANY_A = [
  'Nordic',
  'Alpine',
  'Harbour',
  'Meridian',
  'Cobalt',
  'Juniper',
  'Granite',
  'Lumen',
  'Orchard',
  'Summit',
];
const COMPANY_B = ['Supplies', 'Trading', 'Foods', 'Logistics', 'Studio', 'Tools', 'Outfitters', 'Labs'];
const SUFFIX = ['GmbH', 'Ltd', 'S.A.', 'B.V.', 'AB', 'Sp. z o.o.', 'Inc.'];
const COUNTRIES = [
  'Germany',
  'France',
  'Netherlands',
  'Poland',
  'Sweden',
  'Spain',
  'Italy',
  'Ireland',
  'Austria',
  'Portugal',
];
const STATUSES = [
  ...Array<string>(3).fill('Delivered'),
  'Shipped',
  'Shipped',
  'Paid',
  'Paid',
  'New',
  'Cancelled',
  'Refunded',
];
const CHANNELS = ['Web shop', 'Web shop', 'Web shop', 'Marketplace', 'Phone'];

function customer(): { name: string; email: string } {
  if (random() < 0.4) {
    const a = pick(COMPANY_A);
    const name = `${a} ${pick(COMPANY_B)} ${pick(SUFFIX)}`;
    return { name, email: `orders@${a.toLowerCase()}.example` };
  }
  const first = pick(FIRST);
  const last = pick(LAST);
  const local = `${first}.${last}`
    .normalize('NFD')
    .replace(/[^A-Za-z.]/g, '')
    .toLowerCase();
  return { name: `${first} ${last}`, email: `${local}@mail.example` };
}

function isoDate(dayOffset: number): string {
  return new Date(Date.UTC(2025, 0, 1) + dayOffset * 86_400_000).toISOString().slice(0, 10);
}

/** RFC 4180 quoting: names such as "Harbour Foods, Ltd" or O'Brien stay one cell. */
function cell(value: string): string {
  return /[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

const header = [
  'Order Number',
  'Customer',
  'Email',
  'Country',
  'Items',
  'Total',
  'Status',
  'Order Date',
  'Channel',
];
const records: string[][] = [];
for (let i = 0; i < ROWS; i++) {
  const c = customer();
  const items = 1 + Math.floor(random() * random() * 12);
  const total = (items * (4 + random() * 180)).toFixed(2);
  records.push([
    `SO-${String(100001 + i)}`,
    random() < 0.05 ? `${c.name}, Accounts` : c.name,
    c.email,
    pick(COUNTRIES),
    String(items),
    total,
    pick(STATUSES),
    isoDate(Math.floor((i / ROWS) * 430) + Math.floor(random() * 3)),
    pick(CHANNELS),
  ]);
}

// The deliberate mistakes, each of a kind real exports contain. Column numbers follow `header`.
const mistakes: Array<{ index: number; column: number; value: string; field: string; problem: string }> = [
  { index: 211, column: 5, value: 'n/a', field: 'amount', problem: 'the total is not a number' },
  {
    index: 874,
    column: 6,
    value: 'Backordered',
    field: 'status',
    problem: 'the status is not an option of the worksheet',
  },
  { index: 1402, column: 7, value: '2025-02-30', field: 'placed', problem: 'the order date does not exist' },
  { index: 2088, column: 1, value: '', field: 'customer', problem: 'the required customer is empty' },
  { index: 2650, column: 2, value: 'accounts@', field: 'email', problem: 'the email address has no domain' },
];
const bad: BadRow[] = [];
for (const m of mistakes) {
  const record = records[m.index]!;
  record[m.column] = m.value;
  // Line 1 is the header.
  bad.push({ line: m.index + 2, orderNo: record[0]!, field: m.field, problem: m.problem });
}

const csv = [header, ...records].map((r) => r.map(cell).join(',')).join('\n') + '\n';
writeFileSync(path.join(HERE, 'orders.csv'), csv);
writeFileSync(path.join(HERE, 'bad-rows.json'), `${JSON.stringify(bad, null, 2)}\n`);
process.stdout.write(`wrote ${ROWS} orders (${bad.length} deliberately bad) to ${HERE}\n`);
