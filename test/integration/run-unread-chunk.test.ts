/**
 * A backfill chunk that cannot read its range (its file is gone) fails its run, resumable,
 * naming the chunks and what to do; the run is not recorded complete without those rows.
 * Once the file is back, resuming the run reads the chunks again and writes every row
 * once (the path of src/queue/failed-children.ts for chunk jobs).
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueRun } from '../../src/queue/enqueue-run.ts';
import { startOrResumeRun } from '../../src/queue/start-or-resume-run.ts';
import { writeBackfillJob, writeLedgerJob } from '../helpers/cli-process.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

describe('a backfill chunk that fails reading its range', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await createHarness(
      'unread-chunk',
      {},
      { ROWBRIDGE_BATCH_ATTEMPTS: '2', ROWBRIDGE_BATCH_BACKOFF_MS: '10' },
    );
  });
  afterAll(async () => {
    await h?.close();
  });

  it('fails the run resumable, and resuming it once the file is back writes every row once', async () => {
    const ws = await writeLedgerJob(h, 1500, 'upsert');
    await writeBackfillJob(h);
    const csv = await readFile(path.join(h.dir, 'ledger.csv'), 'utf8');
    await rm(path.join(h.dir, 'ledger.csv'));
    h.startWorkers();

    const runId = await enqueueRun(h.rt, 'backfill', {
      trigger: 'enqueue',
      range: { from: '0', to: '1499', chunks: 2 },
    });
    const first = await h.waitForRun(runId, 60_000);
    expect(first.record.status).toBe('failed');
    expect(first.record.message).toMatch(
      /^2 chunk jobs failed reading their range: .*ledger\.csv does not exist.*; run `rowbridge run backfill` to retry them$/,
    );
    expect(h.emulator.state.rowCount(ws)).toBe(0);
    expect(await h.rt.runs.resumableRun('backfill')).toBe(runId);

    await h.writeFile('ledger.csv', csv);
    const again = await startOrResumeRun(h.rt, 'backfill');
    expect(again.runId).toBe(runId);
    const second = await h.waitForRun(runId, 60_000);
    expect(second.record.status).toBe('completed');
    const entries = h.emulator.state.rows(ws).map((r) => String(r.values.entry));
    expect(entries).toHaveLength(1500);
    expect(new Set(entries).size).toBe(1500);
    expect(second.report.created).toBe(1500);
  });
});
