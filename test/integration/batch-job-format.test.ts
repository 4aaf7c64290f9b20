import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueues } from '../../src/queue/queues.ts';
import type { BatchJobData } from '../../src/queue/queues.ts';
import { BATCH_ROWS_FORMAT } from '../../src/sync/batch/batch-job-rows.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/**
 * A batch job whose rows are in another format than this worker's (another version of
 * rowbridge added it) must not complete with none written: it fails, is retried, and
 * stays in Redis with its rows.
 */
describe('batch jobs in another format than the worker reads', () => {
  let h: Harness;
  let ws: string;

  beforeAll(async () => {
    h = await createHarness('batch-format');
    ws = h.createWorksheet({
      name: 'Orders',
      alias: 'orders',
      fields: [
        { name: 'No', alias: 'no', type: 'Text', required: true, isTitle: true },
        { name: 'Amount', alias: 'amount', type: 'Number' },
      ],
    });
    await h.writeFile('orders.csv', 'no,amount\nA-1,1\nA-2,2\nA-3,3\nA-4,4\nA-5,5\nA-6,6\n');
    await h.writeJob(
      'orders',
      `name: orders
source: { type: csv, path: ./orders.csv }
target: { worksheet: orders, mode: append, batchSize: 3 }
fields: { no: no, amount: amount }
`,
    );
  });
  afterAll(async () => {
    await h?.close();
  });

  it('fails and keeps a job of another format after its attempts, writing nothing and completing nothing', async () => {
    const workers = h.startWorkers(2);
    let written: BatchJobData | undefined;
    workers.batchWorker.on('completed', (job) => {
      written ??= job.data;
    });
    const { report } = await h.runJob('orders');
    expect(report.created).toBe(6);
    expect(written?.format).toBe(BATCH_ROWS_FORMAT);
    const requestsBefore = h.emulator.requests.length;

    // The same rows as another rowbridge might add them: a format this worker does not read.
    const queues = createQueues(h.rt);
    try {
      const failed = new Promise<void>((resolve) => {
        workers.batchWorker.on('failed', (job) => {
          if (job?.id === 'newer' && job.attemptsMade >= 2) resolve();
        });
      });
      await queues.batches.add(
        'batch',
        { ...written!, format: BATCH_ROWS_FORMAT + 1 },
        { jobId: 'newer', attempts: 2, backoff: { type: 'fixed', delay: 10 } },
      );
      await failed;
      const job = await queues.batches.getJob('newer');
      expect(await job?.getState()).toBe('failed');
      expect(job?.attemptsMade).toBe(2);
      expect(job?.failedReason).toMatch(
        /not rows of format 1, the one this worker reads \(format 2, .*run workers of one version on one Redis/,
      );
      // The rows are still there for a worker that reads them.
      expect(job?.data.columnar?.n).toBe(6);
      expect(h.emulator.state.rowCount(ws)).toBe(6);
      expect(h.emulator.requests.length).toBe(requestsBefore);
    } finally {
      await queues.close();
    }
  }, 60_000);
});
