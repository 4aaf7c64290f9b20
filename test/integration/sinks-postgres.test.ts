import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createSink } from '../../src/sync/sinks/create-sink.ts';
import type { PostgresSinkSpec } from '../../src/sync/sinks/sink-spec.ts';
import { rejection } from '../fixtures/sources/source-test-kit.ts';

const URL = 'postgres://root@127.0.0.1:5432/test';
const schema = `rb_sink_pg_${process.pid}_${Date.now()}`;
const env = { PG_SINK_URL: URL };
let admin: pg.Client;

beforeAll(async () => {
  admin = new pg.Client({ connectionString: URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
});
afterAll(async () => {
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
});

const sinkOf = (spec: Omit<PostgresSinkSpec, 'type' | 'urlEnv'>, sinkEnv: Record<string, string> = env) =>
  createSink({ type: 'postgres', urlEnv: 'PG_SINK_URL', ...spec }, { env: sinkEnv, baseDir: '/' });
/** Writes one batch to a new sink, closes it, and returns the error the write failed with. */
async function failedWrite(sink: ReturnType<typeof sinkOf>, records: Array<Record<string, unknown>>) {
  const err = await rejection(sink.write(records));
  await sink.close();
  return err;
}
const rows = async (sql: string) => (await admin.query(sql)).rows as Array<Record<string, unknown>>;

describe('postgres sink', () => {
  it('creates the table from the first batch and upserts by key: a re-written key updates its row', async () => {
    const sink = sinkOf({ table: `${schema}.orders`, key: 'id', createTable: true });
    await sink.write([
      { id: 'o1', total: 10, meta: { tags: ['a'] }, note: 'first' },
      { id: 'o2', total: 20, meta: null, note: null },
    ]);
    await sink.write([{ id: 'o1', total: 11, meta: { tags: ['b'] }, note: 'second' }]);
    await sink.close();
    const types = await rows(
      `SELECT attname, format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = '${schema}.orders'::regclass AND attnum > 0 ORDER BY attnum`,
    );
    expect(types).toEqual([
      { attname: 'id', type: 'text' },
      { attname: 'total', type: 'text' },
      { attname: 'meta', type: 'jsonb' },
      { attname: 'note', type: 'text' },
    ]);
    expect(await rows(`SELECT * FROM ${schema}.orders ORDER BY id`)).toEqual([
      { id: 'o1', total: '11', meta: { tags: ['b'] }, note: 'second' },
      { id: 'o2', total: '20', meta: null, note: null },
    ]);
  });

  it('lets the last record of a key win within one batch and adds columns later records bring', async () => {
    const sink = sinkOf({ table: `${schema}.grow`, key: 'k', createTable: true });
    await sink.write([{ k: 1, a: 'x' }]);
    await sink.write([
      { k: 1, a: 'y', b: 'new' },
      { k: 1, a: 'z', b: 'newer' },
    ]);
    await sink.close();
    expect(await rows(`SELECT * FROM ${schema}.grow`)).toEqual([{ k: '1', a: 'z', b: 'newer' }]);
  });

  it('writes into an existing typed table with quoted identifiers', async () => {
    await admin.query(
      `CREATE TABLE ${schema}."odd ""name""" ("Key" int PRIMARY KEY, "select" numeric, doc json, at timestamptz)`,
    );
    const sink = sinkOf({ table: `${schema}.odd "name"`, key: 'Key' });
    await sink.write([{ Key: 7, select: '9.99', doc: 'plain string', at: new Date('2024-01-01T00:00:00Z') }]);
    await sink.write([{ Key: 7, select: 1.5, doc: [1, 2], at: '2024-02-01T00:00:00Z' }]);
    await sink.close();
    expect(await rows(`SELECT * FROM ${schema}."odd ""name"""`)).toEqual([
      { Key: 7, select: '1.5', doc: [1, 2], at: new Date('2024-02-01T00:00:00Z') },
    ]);
  });

  it('rejects records without a key, listing them, and writes nothing of that batch', async () => {
    const sink = sinkOf({ table: `${schema}.nokey`, key: 'id', createTable: true });
    const err = await rejection(sink.write([{ id: 'a', v: '1' }, { v: '2' }, { id: '', v: '3' }]));
    expect(err.code).toBe('SINK_INVALID_RECORD');
    expect((err as unknown as { recordIndexes: number[] }).recordIndexes).toEqual([1, 2]);
    expect(err.message).toContain('row(s) 2, 3 of this run have no value in key column id');
    await sink.write([{ id: 'b', v: '4' }]);
    await sink.close();
    expect(await rows(`SELECT * FROM ${schema}.nokey`)).toEqual([{ id: 'b', v: '4' }]);
  });

  it('rolls a batch back when the database rejects one of its values', async () => {
    await admin.query(`CREATE TABLE ${schema}.typed (id int PRIMARY KEY, n int)`);
    const sink = sinkOf({ table: `${schema}.typed`, key: 'id' });
    const err = await rejection(
      sink.write([
        { id: 1, n: 5 },
        { id: 2, n: 'five' },
      ]),
    );
    expect(err.code).toBe('SINK_INVALID_RECORD');
    expect(err.message).toContain('invalid input syntax for type integer: "five"');
    await sink.close();
    expect(await rows(`SELECT * FROM ${schema}.typed`)).toEqual([]);
  });

  it('explains a missing table, unknown columns, a key without unique constraint and an unset env var', async () => {
    const missing = await failedWrite(sinkOf({ table: `${schema}.absent`, key: 'id' }), [{ id: 1 }]);
    expect(missing.code).toBe('SINK_CONFIG');
    expect(missing.message).toBe(
      `postgres sink ${schema}.absent (PG_SINK_URL): table ${schema}.absent does not exist; create it or set createTable: true`,
    );
    await admin.query(`CREATE TABLE ${schema}.fixed (id text PRIMARY KEY, name text, other text)`);
    const unknown = await failedWrite(sinkOf({ table: `${schema}.fixed`, key: 'id' }), [
      { id: '1', nmae: 'x' },
    ]);
    expect(unknown.message).toContain('column(s) nmae do not exist');
    expect(unknown.message).toContain('its columns are id, name, other');
    const notUnique = await failedWrite(sinkOf({ table: `${schema}.fixed`, key: 'name' }), [
      { id: '1', name: 'x' },
    ]);
    expect(notUnique.code).toBe('SINK_CONFIG');
    expect(notUnique.message).toContain('no unique or exclusion constraint');
    const noEnv = await failedWrite(sinkOf({ table: 't', key: 'id' }, {}), [{ id: 1 }]);
    expect(noEnv.message).toBe(
      'postgres sink: urlEnv names PG_SINK_URL, but that environment variable is not set',
    );
  });

  it('keeps the password out of connection errors', async () => {
    const sink = sinkOf(
      { table: 't', key: 'id' },
      { PG_SINK_URL: 'postgres://root:hunter2secret@127.0.0.1:1/test' },
    );
    const err = await failedWrite(sink, [{ id: 1 }]);
    expect(err.code).toBe('SINK_UNAVAILABLE');
    expect(JSON.stringify([err.message, err.stack])).not.toContain('hunter2secret');
  });
});
