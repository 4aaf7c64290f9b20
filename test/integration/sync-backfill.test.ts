import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as enqueueMain } from '../../src/cli/enqueue.ts';
import { captureIo } from '../helpers/capture-io.ts';
import { PG_URL, pgQuery } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const SCHEMA = `rb_backfill_${process.pid}`;

describe('backfill: enqueue with a range splits into chunk jobs', () => {
  let h: Harness;
  let ws: string;
  beforeAll(async () => {
    h = await createHarness('backfill', {}, { HISTORY_DB: PG_URL });
    ws = h.createWorksheet({
      name: 'History',
      alias: 'history',
      fields: [
        { name: 'Id', alias: 'hid', type: '2', required: true, isTitle: true },
        { name: 'Seq', alias: 'seq', type: '6' },
      ],
    });
    await pgQuery(
      `CREATE SCHEMA ${SCHEMA}`,
      `CREATE TABLE ${SCHEMA}.history (hid text primary key, seq int not null)`,
      // Several rows share each sequence value, so chunk boundaries fall inside ties.
      `INSERT INTO ${SCHEMA}.history SELECT 'H-' || g, (g + 1) / 2 FROM generate_series(1, 1000) g`,
    );
    await h.writeJob(
      'history',
      `name: history
source: { type: postgres, urlEnv: HISTORY_DB, allowPrivilegedSource: true, table: ${SCHEMA}.history, cursorColumn: seq, keyColumn: hid, batchSize: 97 }
target: { worksheet: history, mode: upsert, key: hid, batchSize: 50 }
fields: { hid: hid, seq: seq }
`,
    );
  });
  afterAll(async () => {
    await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await h.close();
  });

  it('lands exactly the rows whose cursor is in [from, to], each once, and leaves the job cursor alone', async () => {
    const io = captureIo(h.env);
    expect(await enqueueMain(['history', '--from', '51', '--to', '450', '--chunks', '4', '--json'], io)).toBe(
      0,
    );
    const { runId } = JSON.parse(io.all.join('')) as { runId: string };
    h.startWorkers();
    const { record, report } = await h.waitForRun(runId, 120_000);
    expect(record.status).toBe('completed');
    expect(record.range).toBe('51..450 in 4 chunks');
    // seq 51..450 covers ids 101..900.
    expect(report).toMatchObject({ read: 800, created: 800, deadLetteredTotal: 0 });
    const seqs = h.emulator.state.rows(ws).map((r) => Number(r.values.seq));
    expect(seqs).toHaveLength(800);
    expect(Math.min(...seqs)).toBe(51);
    expect(Math.max(...seqs)).toBe(450);
    expect(new Set(h.emulator.state.rows(ws).map((r) => r.values.hid)).size).toBe(800);
    expect(await h.rt.runs.getCursor('history')).toBeUndefined();
  }, 150_000);

  it('refuses a bad range with a usage error naming the option', async () => {
    const io = captureIo(h.env);
    expect(await enqueueMain(['history', '--from', '500', '--to', '10'], io)).toBe(64);
    expect(io.all.join('\n')).toMatch(/--from/);
    expect(await enqueueMain(['history', '--from', '5'], captureIo(h.env))).toBe(64);
  });
});
