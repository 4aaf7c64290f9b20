import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createSource } from '../../src/sync/sources/create-source.ts';
import type { PostgresSourceSpec } from '../../src/sync/sources/source-spec.ts';
import { collect, rejection } from '../fixtures/sources/source-test-kit.ts';

const URL = 'postgres://root@127.0.0.1:5432/test';
const schema = `rb_src_pg_${process.pid}_${Date.now()}`;
const env = { PG_SOURCE_URL: URL };
let admin: pg.Client;

beforeAll(async () => {
  admin = new pg.Client({ connectionString: URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(
    `CREATE TABLE ${schema}.items (id int PRIMARY KEY, name text, updated_at timestamptz, seq bigint)`,
  );
  // Ties: ids 2-6 share one timestamp, 8-9 another; 10 and 11 differ only in microseconds.
  const rows: Array<[number, string, string | null, string]> = [
    [1, 'a', '2024-01-01 00:00:00+00', '10'],
    [2, 'b', '2024-01-02 00:00:00+00', '20'],
    [3, 'c', '2024-01-02 00:00:00+00', '20'],
    [4, 'd', '2024-01-02 00:00:00+00', '20'],
    [5, 'e', '2024-01-02 00:00:00+00', '20'],
    [6, 'f', '2024-01-02 00:00:00+00', '20'],
    [7, 'g', '2024-01-03 00:00:00+00', '30'],
    [8, 'h', '2024-01-04 00:00:00+00', '40'],
    [9, 'i', '2024-01-04 00:00:00+00', '40'],
    [10, 'j', '2024-01-05 00:00:00.123456+00', '9007199254740993'],
    [11, 'k', '2024-01-05 00:00:00.123457+00', '9007199254740994'],
    [12, 'l', null, '1'],
  ];
  for (const row of rows) await admin.query(`INSERT INTO ${schema}.items VALUES ($1, $2, $3, $4)`, row);
});
afterAll(async () => {
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
});

const read = (
  spec: Partial<PostgresSourceSpec>,
  extra: { since?: unknown; env?: Record<string, string> } = {},
) =>
  collect(
    createSource(
      {
        type: 'postgres',
        urlEnv: 'PG_SOURCE_URL',
        allowPrivilegedSource: true,
        cursorColumn: 'updated_at',
        ...spec,
      },
      { env: extra.env ?? env, baseDir: '/', ...(extra.since === undefined ? {} : { since: extra.since }) },
    ),
  );

describe('postgres source', () => {
  it('reads every row once in cursor order with (cursor, key) pages across ties', async () => {
    const items = await read({ table: `${schema}.items`, keyColumn: 'id', batchSize: 2 });
    expect(items.map((i) => i.data.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(items.map((i) => i.position.id)).toEqual([
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
      '9',
      '10',
      '11',
    ]);
    expect(items[0]).toMatchObject({
      data: { name: 'a', seq: '10' },
      position: { index: 0 },
      cursor: '2024-01-01 00:00:00+00',
    });
    expect(items[0]?.data.updated_at).toEqual(new Date('2024-01-01T00:00:00Z'));
    expect(items[0]?.data).not.toHaveProperty('__rowbridge_cursor');
  });

  it('without a key column still reads a group of ties larger than a page exactly once', async () => {
    for (const batchSize of [1, 2, 3, 4, 100]) {
      const ids = (await read({ table: `${schema}.items`, batchSize })).map((i) => i.data.id as number);
      expect([...ids].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    }
  });

  it('with since reads only rows past the saved cursor, down to the microsecond', async () => {
    const all = await read({ table: `${schema}.items`, keyColumn: 'id' });
    const savedAfterRow10 = all.find((i) => i.data.id === 10)?.cursor;
    expect(savedAfterRow10).toBe('2024-01-05 00:00:00.123456+00');
    expect(
      (await read({ table: `${schema}.items` }, { since: savedAfterRow10 })).map((i) => i.data.id),
    ).toEqual([11]);
    expect(
      (
        await read(
          { table: `${schema}.items`, keyColumn: 'id', batchSize: 2 },
          { since: '2024-01-02 00:00:00+00' },
        )
      ).map((i) => i.data.id),
    ).toEqual([7, 8, 9, 10, 11]);
  });

  it('orders a bigint cursor exactly past 2^53', async () => {
    const items = await read(
      { table: `${schema}.items`, cursorColumn: 'seq', keyColumn: 'id' },
      { since: '9007199254740993' },
    );
    expect(items.map((i) => [i.data.id, i.cursor])).toEqual([[11, '9007199254740994']]);
  });

  it('reads a query, with its own filter and a trailing semicolon', async () => {
    const items = await read({
      query: `SELECT id, upper(name) AS name, updated_at FROM ${schema}.items WHERE id > 8;`,
      batchSize: 1,
    });
    expect(items.map((i) => i.data)).toEqual([
      { id: 9, name: 'I', updated_at: new Date('2024-01-04T00:00:00Z') },
      { id: 10, name: 'J', updated_at: new Date('2024-01-05T00:00:00.123Z') },
      { id: 11, name: 'K', updated_at: new Date('2024-01-05T00:00:00.123Z') },
    ]);
  });

  it('reports settings mistakes clearly', async () => {
    const noEnv = await rejection(read({ table: 'x' }, { env: {} }));
    expect(noEnv.code).toBe('SOURCE_CONFIG');
    expect(noEnv.message).toBe(
      'postgres source: urlEnv names PG_SOURCE_URL, but that environment variable is not set',
    );
    expect((await rejection(read({ table: 'x', query: 'SELECT 1' }))).message).toBe(
      'postgres source: set exactly one of table and query (got both)',
    );
    const badColumn = await rejection(read({ table: `${schema}.items`, cursorColumn: 'nope' }));
    expect(badColumn.code).toBe('SOURCE_CONFIG');
    expect(badColumn.message).toContain('column rowbridge_src.nope does not exist');
  });

  it('keeps the password out of connection errors', async () => {
    const err = await rejection(
      read({ table: 'x' }, { env: { PG_SOURCE_URL: 'postgres://root:hunter2secret@127.0.0.1:1/test' } }),
    );
    expect(err.code).toBe('SOURCE_UNAVAILABLE');
    expect(err.message).toMatch(/^postgres source \(PG_SOURCE_URL\): cannot connect: /);
    expect(JSON.stringify([err.message, err.stack, String(err.cause)])).not.toContain('hunter2secret');
  });
});
