import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { createSource } from '../../src/sync/sources/create-source.ts';
import type { SourceSpec } from '../../src/sync/sources/source-spec.ts';
import { splitRange } from '../../src/sync/read/split-range.ts';
import { collect } from '../fixtures/sources/source-test-kit.ts';

const PG_URL = 'postgres://root@127.0.0.1:5432/test';
const MY_URL = 'mysql://root@127.0.0.1:3306/test';
const env = { PG_UNTIL_URL: PG_URL, MY_UNTIL_URL: MY_URL };
const suffix = `${process.pid}_${Date.now()}`;
const pgSchema = `rb_until_pg_${suffix}`;
const myDb = `rb_until_my_${suffix}`;

type Column = 'seq' | 'at' | 'amount' | 'day';
/** One row: a value in one cursor column (the others NULL) and whether it lies in that column's range. */
interface Row {
  id: number;
  column: Column;
  value: bigint | number | string;
  inRange: boolean;
}

const BASE_MS = Date.UTC(2024, 0, 1);
const HOUR_US = 3_600_000_000n;
/** Microseconds past 2024-01-01T00:00:00Z as ISO text (`Z`) or database text (space, no zone). */
function timestamp(us: bigint, style: 'iso' | 'db'): string {
  const ms = Number(us / 1000n) + (us < 0n && us % 1000n !== 0n ? -1 : 0);
  const micros = (((us % 1_000_000n) + 1_000_000n) % 1_000_000n).toString().padStart(6, '0');
  const text = `${new Date(BASE_MS + ms).toISOString().slice(0, 19)}.${micros}`;
  return style === 'iso' ? `${text}Z` : text.replace('T', ' ');
}

// Ties sit on the chunk boundaries the tests produce (3, 4 and 7 chunks), and single rows a
// hair inside and outside each end; every cursor column also has NULLs (the other rows).
function buildRows(): Row[] {
  const rows: Row[] = [];
  const add = (column: Column, value: Row['value'], inRange: boolean, copies = 1): void => {
    for (let i = 0; i < copies; i++) rows.push({ id: rows.length + 1, column, value, inRange });
  };
  for (let v = 0; v <= 21; v++) add('seq', BigInt(v), v >= 1 && v <= 20, 3);
  for (const hour of [0n, 6n, 8n, 12n, 16n, 18n, 24n]) {
    const at = hour * HOUR_US;
    add('at', at - 1n, hour > 0n);
    add('at', at, true, 3);
    add('at', at + 1n, hour < 24n);
  }
  for (const cents of [99, 100, 100, 132, 133, 133, 134, 166, 166, 167, 200, 200, 201])
    add('amount', cents, cents >= 100 && cents <= 200);
  for (let d = -1; d <= 31; d++) add('day', d, d >= 0 && d <= 30, [6, 14, 22].includes(d) ? 3 : 1);
  return rows;
}
const rows = buildRows();

interface Case {
  column: Column;
  from: string;
  to: string;
  chunkCounts: number[];
}
const cases = (style: 'iso' | 'db'): Case[] => [
  { column: 'seq', from: '1', to: '20', chunkCounts: [1, 3, 7, 20] },
  {
    column: 'at',
    from: timestamp(0n, style),
    to: timestamp(24n * HOUR_US, style),
    chunkCounts: [1, 3, 4, 7],
  },
  { column: 'amount', from: '1.00', to: '2.00', chunkCounts: [1, 3, 4] },
  { column: 'day', from: '2024-01-01', to: '2024-01-31', chunkCounts: [1, 4, 31] },
];
const readers = [{ keyColumn: 'id', batchSize: 2 }, { batchSize: 2 }, {}];

/** Reads every chunk of [from, to] and returns the ids read, sorted (duplicates kept). */
async function readChunks(source: (c: Case) => SourceSpec, c: Case, chunks: number): Promise<number[]> {
  const ids: number[] = [];
  for (const chunk of splitRange(c.from, c.to, chunks)) {
    const items = await collect(createSource(source(c), { env, baseDir: '/', ...chunk }));
    ids.push(...items.map((item) => Number(item.data.id)));
  }
  return ids.sort((a, b) => a - b);
}

function expected(column: Column): number[] {
  return rows.filter((r) => r.column === column && r.inRange).map((r) => r.id);
}

function cell(row: Row, column: Column, style: 'iso' | 'db'): unknown {
  if (row.column !== column) return null;
  if (column === 'seq') return String(row.value);
  if (column === 'at') return timestamp(row.value as bigint, style);
  if (column === 'amount') return (Number(row.value) / 100).toFixed(2);
  return new Date(BASE_MS + Number(row.value) * 86_400_000).toISOString().slice(0, 10);
}

describe('postgres source: a backfill range read in chunks', () => {
  let admin: pg.Client;
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${pgSchema}`);
    await admin.query(
      `CREATE TABLE ${pgSchema}.events (id int PRIMARY KEY, seq bigint, at timestamptz, amount numeric(10,2), day date)`,
    );
    for (const row of rows) {
      const values = (['seq', 'at', 'amount', 'day'] as const).map((column) => cell(row, column, 'iso'));
      await admin.query(`INSERT INTO ${pgSchema}.events VALUES ($1, $2, $3, $4, $5)`, [row.id, ...values]);
    }
  });
  afterAll(async () => {
    await admin.query(`DROP SCHEMA ${pgSchema} CASCADE`);
    await admin.end();
  });

  for (const c of cases('iso')) {
    it(`reads exactly the rows in [from, to] of ${c.column}, ties at every chunk edge once`, async () => {
      for (const reader of readers) {
        const source = (k: Case): SourceSpec => ({
          type: 'postgres',
          urlEnv: 'PG_UNTIL_URL',
          allowPrivilegedSource: true,
          table: `${pgSchema}.events`,
          cursorColumn: k.column,
          ...reader,
        });
        for (const chunks of c.chunkCounts) {
          expect({ ...c, reader, chunks, ids: await readChunks(source, c, chunks) }).toEqual({
            ...c,
            reader,
            chunks,
            ids: expected(c.column),
          });
        }
      }
    });
  }

  it('reads a range from a query source too', async () => {
    const c: Case = { column: 'seq', from: '5', to: '9', chunkCounts: [2] };
    const source = (): SourceSpec => ({
      type: 'postgres',
      urlEnv: 'PG_UNTIL_URL',
      allowPrivilegedSource: true,
      query: `SELECT id, seq FROM ${pgSchema}.events`,
      cursorColumn: 'seq',
      batchSize: 1,
    });
    const want = rows
      .filter((r) => r.column === 'seq' && Number(r.value) >= 5 && Number(r.value) <= 9)
      .map((r) => r.id);
    expect(await readChunks(source, c, 2)).toEqual(want);
  });
});

describe('mysql source: a backfill range read in chunks', () => {
  let admin: mysql.Connection;
  beforeAll(async () => {
    admin = await mysql.createConnection({ uri: MY_URL });
    await admin.query(`CREATE DATABASE ${myDb}`);
    await admin.query(
      `CREATE TABLE ${myDb}.events (id int PRIMARY KEY, seq bigint NULL, at datetime(6) NULL, amount decimal(10,2) NULL, day date NULL)`,
    );
    for (const row of rows) {
      const values = (['seq', 'at', 'amount', 'day'] as const).map((column) => cell(row, column, 'db'));
      await admin.query(`INSERT INTO ${myDb}.events VALUES (?, ?, ?, ?, ?)`, [row.id, ...values]);
    }
  });
  afterAll(async () => {
    await admin.query(`DROP DATABASE ${myDb}`);
    await admin.end();
  });

  for (const c of cases('db')) {
    it(`reads exactly the rows in [from, to] of ${c.column}, ties at every chunk edge once`, async () => {
      for (const reader of readers) {
        const source = (k: Case): SourceSpec => ({
          type: 'mysql',
          urlEnv: 'MY_UNTIL_URL',
          allowPrivilegedSource: true,
          table: `${myDb}.events`,
          cursorColumn: k.column,
          ...reader,
        });
        for (const chunks of c.chunkCounts) {
          expect({ ...c, reader, chunks, ids: await readChunks(source, c, chunks) }).toEqual({
            ...c,
            reader,
            chunks,
            ids: expected(c.column),
          });
        }
      }
    });
  }
});

describe('http source: a backfill range read in chunks', () => {
  let server: Server;
  let url = '';
  beforeAll(async () => {
    const items = rows
      .filter((r) => r.column === 'at')
      .map((r) => ({ id: r.id, at: timestamp(r.value as bigint, 'iso') }));
    items.push({ id: 9999, at: '' });
    server = createServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page'));
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(items.slice((page - 1) * 5, page * 5)));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/items`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  });

  it('filters pages client-side to the chunk, records without a cursor read by no chunk', async () => {
    const c = cases('iso')[1];
    if (c === undefined) throw new Error('no timestamp case');
    const spec: SourceSpec = { type: 'http', url, pagination: { type: 'page', pageSize: 5 } };
    for (const chunks of [1, 4, 7]) {
      const ids: number[] = [];
      for (const chunk of splitRange(c.from, c.to, chunks)) {
        const items = await collect(
          createSource(spec, { env: {}, baseDir: '/', cursorField: 'at', ...chunk }),
        );
        ids.push(...items.map((item) => Number(item.data.id)));
      }
      expect({ chunks, ids: ids.sort((a, b) => a - b) }).toEqual({ chunks, ids: expected('at') });
    }
  });
});
