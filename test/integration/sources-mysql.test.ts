import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mysql from 'mysql2/promise';
import { createSource } from '../../src/sync/sources/create-source.ts';
import type { MysqlSourceSpec } from '../../src/sync/sources/source-spec.ts';
import { collect, rejection } from '../fixtures/sources/source-test-kit.ts';

const URL = 'mysql://root@127.0.0.1:3306/test';
const db = `rb_src_my_${process.pid}_${Date.now()}`;
const env = { MY_SOURCE_URL: URL };
let admin: mysql.Connection;

beforeAll(async () => {
  admin = await mysql.createConnection({ uri: URL });
  await admin.query(`CREATE DATABASE ${db}`);
  await admin.query(
    `CREATE TABLE ${db}.items (id int PRIMARY KEY, name varchar(20), updated_at datetime(6) NULL, seq bigint)`,
  );
  const rows: Array<[number, string, string | null, string]> = [
    [1, 'a', '2024-01-01 00:00:00', '10'],
    [2, 'b', '2024-01-02 00:00:00', '20'],
    [3, 'c', '2024-01-02 00:00:00', '20'],
    [4, 'd', '2024-01-02 00:00:00', '20'],
    [5, 'e', '2024-01-02 00:00:00', '20'],
    [6, 'f', '2024-01-03 00:00:00', '30'],
    [7, 'g', '2024-01-05 00:00:00.123456', '9007199254740993'],
    [8, 'h', '2024-01-05 00:00:00.123457', '9007199254740994'],
    [9, 'i', null, '1'],
  ];
  for (const row of rows) await admin.query(`INSERT INTO ${db}.items VALUES (?, ?, ?, ?)`, row);
});
afterAll(async () => {
  await admin.query(`DROP DATABASE ${db}`);
  await admin.end();
});

const read = (
  spec: Partial<MysqlSourceSpec>,
  extra: { since?: unknown; env?: Record<string, string> } = {},
) =>
  collect(
    createSource(
      {
        type: 'mysql',
        urlEnv: 'MY_SOURCE_URL',
        allowPrivilegedSource: true,
        cursorColumn: 'updated_at',
        ...(spec.query === undefined ? { table: `${db}.items` } : {}),
        ...spec,
      },
      { env: extra.env ?? env, baseDir: '/', ...(extra.since === undefined ? {} : { since: extra.since }) },
    ),
  );

describe('mysql source', () => {
  it('reads every row once in cursor order with (cursor, key) pages across ties', async () => {
    const items = await read({ keyColumn: 'id', batchSize: 2 });
    expect(items.map((i) => i.data.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(items.map((i) => i.position.id)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8']);
    expect(items[6]).toMatchObject({
      data: { name: 'g', seq: '9007199254740993' },
      cursor: '2024-01-05 00:00:00.123456',
    });
    // A zone-less DATETIME stays the wall clock it holds: the mapping's timezone reads it.
    expect(items[0]?.data.updated_at).toBe('2024-01-01 00:00:00.000000');
  });

  it('without a key column reads a group of ties larger than a page exactly once', async () => {
    for (const batchSize of [1, 2, 3, 100]) {
      const ids = (await read({ batchSize })).map((i) => i.data.id as number);
      expect([...ids].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    }
  });

  it('with since reads only rows past the saved cursor, down to the microsecond', async () => {
    const all = await read({});
    const saved = all.find((i) => i.data.id === 7)?.cursor;
    expect((await read({}, { since: saved })).map((i) => i.data.id)).toEqual([8]);
    expect(
      (await read({ keyColumn: 'id', batchSize: 2 }, { since: '2024-01-02 00:00:00' })).map((i) => i.data.id),
    ).toEqual([6, 7, 8]);
  });

  it('reads a query and reports settings mistakes clearly', async () => {
    const items = await read({ query: `SELECT id, name, updated_at FROM ${db}.items WHERE id IN (1, 2);` });
    expect(items.map((i) => i.data.name)).toEqual(['a', 'b']);
    const badColumn = await rejection(read({ cursorColumn: 'nope' }));
    expect(badColumn.code).toBe('SOURCE_CONFIG');
    expect(badColumn.message).toContain("Unknown column 'rowbridge_src.nope'");
    const noEnv = await rejection(read({}, { env: {} }));
    expect(noEnv.message).toBe(
      'mysql source: urlEnv names MY_SOURCE_URL, but that environment variable is not set',
    );
  });

  it('keeps the password out of connection errors', async () => {
    const err = await rejection(
      read({}, { env: { MY_SOURCE_URL: 'mysql://root:hunter2secret@127.0.0.1:3306/test' } }),
    );
    expect(err.code).toBe('SOURCE_UNAVAILABLE');
    expect(err.message).toMatch(/^mysql source \(MY_SOURCE_URL\): cannot connect: /);
    expect(JSON.stringify([err.message, err.stack])).not.toContain('hunter2secret');
  });
});
