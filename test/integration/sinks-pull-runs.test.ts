import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSource } from '../../src/sync/sources/create-source.ts';
import { collect } from '../fixtures/sources/source-test-kit.ts';
import { PG_URL, pgQuery } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const SCHEMA = `rb_pullruns_${process.pid}`;
const ROWS = 1200;

/**
 * Pull jobs through the queue, the worker and the emulator, counted in the file or table
 * they leave: after a re-run, after a re-read of rows already pulled, and after a run
 * that fails half-way (pullRun writes in batches of 500, so a bad row past the 500th
 * fails a run that has written).
 */
describe('pull runs never leave a row twice', () => {
  let h: Harness;
  let ws: string;
  let clock = Date.parse('2025-06-01T00:00:00Z');
  const rowIds = new Map<string, string>();

  beforeAll(async () => {
    h = await createHarness('pullruns', { now: () => clock }, { EXPORT_DB: PG_URL });
    ws = h.createWorksheet({
      name: 'Parts',
      alias: 'parts',
      fields: [
        { name: 'Code', alias: 'code', type: 'Text', isTitle: true },
        { name: 'Note', alias: 'note', type: 'Text' },
      ],
    });
    const client = h.rt.clientFor();
    for (let start = 1; start <= ROWS; start += 100) {
      // Reads order by creation time, then by (random) row id: one second per hundred
      // rows puts P-0801..P-0900 at read positions 801-900, past the first batch of 500.
      clock += 1_000;
      const codes = Array.from({ length: 100 }, (_, i) => `P-${String(start + i).padStart(4, '0')}`);
      const { rowIds: ids } = await client.rows.batchCreate(ws, {
        rows: codes.map((code) => ({
          fields: [
            { id: 'code', value: code },
            { id: 'note', value: 'n' },
          ],
        })),
      });
      codes.forEach((code, i) => rowIds.set(code, ids[i]!));
    }
    await pgQuery(`CREATE SCHEMA ${SCHEMA}`);
  });
  afterAll(async () => {
    await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await h.close();
  });

  const setField = async (codes: string[], field: string, value: string) => {
    clock += 1_000;
    await h.rt.clientFor().rows.batchUpdate(ws, {
      rowIds: codes.map((c) => rowIds.get(c)!),
      fields: [{ id: field, value }],
    });
    clock += 60_000;
  };
  const readCsv = async (file: string) =>
    (await collect(createSource({ type: 'csv', path: file }, { env: {}, baseDir: h.dir }))).map(
      (i) => i.data,
    );
  const asideFiles = async () => (await readdir(h.dir)).filter((n) => n.includes('.rowbridge-'));

  it('an incremental pull to csv merges changed rows by key, and a re-read adds none', async () => {
    await h.writeJob(
      'parts-changes',
      `name: parts-changes
source: { type: worksheet, worksheet: parts }
sink: { type: csv, path: ./parts-changes.csv, key: row }
fields: { row: { from: rowid }, code: code, note: note }
incremental: { cursor: _updatedAt }
`,
    );
    clock += 60_000;
    expect((await h.runJob('parts-changes')).record.status).toBe('completed');
    expect(await readCsv('parts-changes.csv')).toHaveLength(ROWS);
    const firstCursor = await h.rt.runs.getCursor('parts-changes');

    await setField(['P-0002', 'P-0900'], 'note', 'moved');
    expect((await h.runJob('parts-changes')).record.status).toBe('completed');
    const after = await readCsv('parts-changes.csv');
    expect(after).toHaveLength(ROWS);
    expect(new Set(after.map((r) => r.row)).size).toBe(ROWS);
    expect(
      after
        .filter((r) => r.note === 'moved')
        .map((r) => r.code)
        .sort(),
    ).toEqual(['P-0002', 'P-0900']);

    // A worker that died after writing but before saving its cursor: the next run reads
    // the same rows again. They replace themselves.
    await h.rt.runs.setCursor('parts-changes', firstCursor!);
    expect((await h.runJob('parts-changes')).record.status).toBe('completed');
    expect(await readCsv('parts-changes.csv')).toEqual(after);
    expect(await asideFiles()).toEqual([]);
  });

  it('a pull that fails half-way leaves the previous csv whole; the re-run holds each row once', async () => {
    await h.writeJob(
      'parts-full',
      `name: parts-full
source: { type: worksheet, worksheet: parts }
sink: { type: csv, path: ./parts-full.csv, key: code }
fields: { code: code, note: note }
`,
    );
    expect((await h.runJob('parts-full')).record.status).toBe('completed');
    const before = await readFile(path.join(h.dir, 'parts-full.csv'), 'utf8');
    expect(await readCsv('parts-full.csv')).toHaveLength(ROWS);

    // Row 900 loses its key: the run writes its first batch of 500, then fails.
    await setField(['P-0900'], 'code', '');
    const failed = await h.runJob('parts-full');
    expect(failed.record.status).toBe('failed');
    // P-0900 is read at position 801-900: past the first batch of 500 the run wrote.
    const message = failed.record.message ?? '';
    const at = Number(/row\(s\) (\d+) of this run/.exec(message)?.[1]);
    expect(message).toContain(
      `${path.join(h.dir, 'parts-full.csv')}: row(s) ${at} of this run have no value in the key column(s) code (sink.key)`,
    );
    expect(at).toBeGreaterThan(800);
    expect(at).toBeLessThanOrEqual(900);
    expect(await readFile(path.join(h.dir, 'parts-full.csv'), 'utf8')).toBe(before);
    expect(await asideFiles()).toEqual([]);

    await h.rt.clientFor().rows.batchUpdate(ws, {
      rowIds: [rowIds.get('P-0900')!],
      fields: [{ id: 'code', value: 'P-0900' }],
    });
    for (let run = 0; run < 2; run++) {
      expect((await h.runJob('parts-full')).record.status).toBe('completed');
      const rows = await readCsv('parts-full.csv');
      expect(rows).toHaveLength(ROWS);
      expect(new Set(rows.map((r) => r.code)).size).toBe(ROWS);
    }
  });

  it('a postgres pull that fails half-way keeps its committed batches; the re-run upserts, adding no row', async () => {
    // note varchar(5): a longer note is a value the table refuses.
    await pgQuery(`CREATE TABLE ${SCHEMA}.parts (code text PRIMARY KEY, note varchar(5))`);
    await h.writeJob(
      'parts-pg',
      `name: parts-pg
source: { type: worksheet, worksheet: parts }
sink: { type: postgres, urlEnv: EXPORT_DB, table: ${SCHEMA}.parts, key: code }
fields: { code: code, note: note }
`,
    );
    await setField(['P-0900'], 'note', 'far too long');
    const failed = await h.runJob('parts-pg');
    expect(failed.record.status).toBe('failed');
    const partial = await pgQuery<{ n: string }>(`SELECT count(*) AS n FROM ${SCHEMA}.parts`);
    // The first batch of 500 was committed; the second, holding P-0900, was rolled back whole.
    expect(Number(partial[0]!.n)).toBe(500);

    await setField(['P-0900'], 'note', 'ok');
    for (let run = 0; run < 2; run++) {
      expect((await h.runJob('parts-pg')).record.status).toBe('completed');
      const rows = await pgQuery<{ n: string; keys: string }>(
        `SELECT count(*) AS n, count(DISTINCT code) AS keys FROM ${SCHEMA}.parts`,
      );
      expect(rows[0]).toEqual({ n: String(ROWS), keys: String(ROWS) });
    }
  });
});
