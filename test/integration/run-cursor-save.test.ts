import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueRun } from '../../src/queue/enqueue-run.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const ROWS = 3000;

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * The incremental cursor of a job is saved by the run's finalizer, once every batch it
 * covers is confirmed: a run whose batches did not all land must leave it where it was,
 * or the next run would skip the rows that never landed.
 */
describe('incremental cursor: saved only when the batches it covers are confirmed', () => {
  let h: Harness;
  let ws: string;
  const csv = (count: number) =>
    ['code,seq', ...Array.from({ length: count }, (_, i) => `C-${i + 1},${i + 1}`)].join('\n') + '\n';
  const codes = () => h.emulator.state.rows(ws).map((r) => String(r.values.code));
  const savedCursor = async () => {
    const raw = await h.rt.runs.getCursor('ticks');
    return raw === undefined ? undefined : String(JSON.parse(raw));
  };

  beforeAll(async () => {
    // Slow writes: the run is still writing when the test stops the platform.
    h = await createHarness('cursor-save', { faults: { seed: 11, latencyMs: [20, 40] } });
    ws = h.createWorksheet({
      name: 'Ticks',
      alias: 'ticks',
      fields: [
        { name: 'Code', alias: 'code', type: '2', required: true, isTitle: true },
        { name: 'Seq', alias: 'seq', type: '6' },
      ],
    });
    await h.writeFile('ticks.csv', csv(ROWS));
    await h.writeJob(
      'ticks',
      `name: ticks
source: { type: csv, path: ./ticks.csv }
target: { worksheet: ticks, mode: upsert, key: code, batchSize: 50 }
fields: { code: code, seq: seq }
incremental: { cursor: seq }
`,
    );
  });
  afterAll(async () => {
    await h.close();
  });

  it('a run the platform stops after the file was read leaves the cursor unsaved; the next run lands the rest and saves it', async () => {
    h.startWorkers(1);
    const runId = await enqueueRun(h.rt, 'ticks', { trigger: 'cli' });
    await until(() => h.emulator.state.rowCount(ws) >= 100, 60_000, 'the first rows');
    // The platform starts refusing this client's address (10000): the run stops with
    // rows still unwritten, though the reader saw every cursor value up to the last.
    h.emulator.setOptions({ ipAllowList: ['203.0.113.9'] });
    const stopped = await h.waitForRun(runId, 60_000);
    expect(stopped.record.status).toBe('failed');
    expect(h.emulator.state.rowCount(ws)).toBeLessThan(ROWS);
    expect(await savedCursor()).toBeUndefined();

    h.emulator.setOptions({ ipAllowList: undefined });
    const again = await h.runJob('ticks');
    expect(again.record.status).toBe('completed');
    // Nothing skipped: every row landed, each once.
    expect(new Set(codes()).size).toBe(ROWS);
    expect(codes()).toHaveLength(ROWS);
    expect(await savedCursor()).toBe(String(ROWS));
  });

  it('the next run reads only the records from the saved cursor on and moves the cursor to the last of them', async () => {
    await h.writeFile('ticks.csv', csv(ROWS + 3));
    const { record, report } = await h.runJob('ticks');
    expect(record.status).toBe('completed');
    // The record at the saved cursor is read again (a late row may share its value) and
    // found unchanged; the three past it land. Compared as text, "999" would have been
    // the cursor and two thousand records read again.
    expect(report).toMatchObject({ read: 4, created: 3, unchanged: 1 });
    expect(codes()).toHaveLength(ROWS + 3);
    expect(await savedCursor()).toBe(String(ROWS + 3));
  });

  it('a run that reads no records keeps the saved cursor, and the run after it reads from there', async () => {
    await h.writeFile('ticks.csv', 'code,seq\n');
    expect((await h.runJob('ticks')).record.status).toBe('completed');
    expect(await savedCursor()).toBe(String(ROWS + 3));
    await h.writeFile('ticks.csv', csv(ROWS + 4));
    const { report } = await h.runJob('ticks');
    expect(report).toMatchObject({ read: 2, created: 1, unchanged: 1 });
    expect(await savedCursor()).toBe(String(ROWS + 4));
  });
});
