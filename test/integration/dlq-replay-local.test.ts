import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as dlq } from '../../src/cli/dlq.ts';
import { createQueues } from '../../src/queue/queues.ts';
import { captureIo } from '../helpers/capture-io.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/**
 * `dlq replay` works its replay in this process, with the job spec of this process's jobs
 * folder ("re-mapped with the job spec as it is now"): a worker on the same Redis whose
 * jobs folder holds another version of the job, or none, must not take it.
 */
describe('dlq replay beside a worker with another version of the job', () => {
  let h: Harness;
  let sheet: string;
  let fixedDir: string;
  const workerTook: string[] = [];

  beforeAll(async () => {
    h = await createHarness('dlqlocal');
    sheet = h.createWorksheet({
      name: 'Orders',
      alias: 'orders',
      fields: [
        { name: 'No', alias: 'no', type: 'Text', required: true, isTitle: true },
        { name: 'Amount', alias: 'amount', type: 'Number' },
      ],
    });
    await h.writeFile('orders.csv', 'no,amount,amount_num\nO-1,10,10\nO-2,ten,11\n');
    // The worker's version: maps the text column, which O-2 fails.
    await h.writeJob(
      'orders',
      `name: orders
source: { type: csv, path: ./orders.csv }
target: { worksheet: orders, mode: upsert, key: no }
fields: { no: no, amount: amount }
`,
    );
    const { report } = await h.runJob('orders');
    expect(report).toMatchObject({ created: 1, deadLetteredTotal: 1 });
    // The fix, in the jobs folder of the person replaying: the numeric column.
    fixedDir = await mkdtemp(path.join(tmpdir(), 'rowbridge-dlqlocal-fixed-'));
    await writeFile(
      path.join(fixedDir, 'orders.yaml'),
      `name: orders
source: { type: csv, path: ${path.join(h.dir, 'orders.csv')} }
target: { worksheet: orders, mode: upsert, key: no }
fields: { no: no, amount: amount_num }
`,
    );
    // The harness's workers stay up, listening to the shared queues with the old spec.
    const { runWorker, batchWorker } = h.startWorkers();
    for (const w of [runWorker, batchWorker])
      w.on('active', (job: Job<{ runId?: string }>) => workerTook.push(job.data.runId ?? '?'));
  });
  afterAll(async () => {
    await h.close();
    await rm(fixedDir, { recursive: true, force: true });
  });

  it('lands the row with the fixed spec; the worker takes no job of the replay', async () => {
    const io = captureIo({ ...h.env, ROWBRIDGE_JOBS_DIR: fixedDir });
    const code = await dlq(['replay', '--job', 'orders'], io);
    expect(code, io.all.join('\n')).toBe(0);
    const rows = new Map(h.emulator.state.rows(sheet).map((r) => [String(r.values.no), r.values]));
    expect(rows.get('O-2')).toMatchObject({ amount: 11 });
    expect(await h.rt.deadLetters.counts({ job: 'orders' })).toEqual({});
    const [replay] = (await h.rt.runs.list({ job: 'orders' })).filter((r) => r.trigger === 'replay');
    expect(replay).toBeDefined();
    expect(workerTook).not.toContain(replay!.runId);
    // It never was in the workers' queues.
    const shared = createQueues(h.rt);
    try {
      expect(await shared.runs.getJob(replay!.runId)).toBeUndefined();
    } finally {
      await shared.close();
    }
  }, 60_000);
});
