import { Readable } from 'node:stream';
import { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/ground/logger.ts';
import { fanOutBatches } from '../../src/queue/fan-out.ts';
import { createQueues } from '../../src/queue/queues.ts';
import type { BatchJobData, RunJobData } from '../../src/queue/queues.ts';
import { createSyncContext, readWorksheetKeys } from '../../src/sync/write/create-sync-context.ts';
import { batchRowIndexes, batchRows } from '../../src/sync/batch/batch-job-rows.ts';
import type { SourceRecord } from '../../src/sync/model/types.ts';
import { writeBatch } from '../../src/sync/write/write-batch.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/**
 * Write requests of an upsert (issue 12): creates and identical change sets spread over
 * many platform batches of a run go out together, as the platform's batch create and
 * batch update allow, instead of one part-filled request per platform batch.
 */
describe('upsert write requests across platform batches', () => {
  let h: Harness;
  let ws: string;

  beforeAll(async () => {
    h = await createHarness('sync-requests');
    ws = h.createWorksheet({
      name: 'Items',
      alias: 'items',
      fields: [
        { name: 'Code', alias: 'code', type: '2', required: true, isTitle: true },
        { name: 'Qty', alias: 'qty', type: '6' },
        { name: 'Note', alias: 'note', type: '2' },
      ],
    });
    await h.writeJob(
      'items',
      `name: items
source: { type: csv, path: ./items.csv }
target: { worksheet: items, mode: upsert, key: code, batchSize: 4, triggerWorkflow: false }
fields: { code: code, qty: qty, note: note }
`,
    );
  });
  afterAll(async () => {
    await h.close();
  });

  const csv = (rows: string[][]) => ['code,qty,note', ...rows.map((r) => r.join(','))].join('\n') + '\n';

  it('one batch create for new rows of different platform batches, one batch PATCH per 4 rows sharing a change set', async () => {
    const base = Array.from({ length: 40 }, (_, i) => [`I-${i}`, String(i), 'old']);
    await h.writeFile('items.csv', csv(base));
    const first = await h.runJob('items');
    expect(first.report).toMatchObject({ created: 40, deadLetteredTotal: 0 });
    const ids = new Map(h.emulator.state.rows(ws).map((r) => [String(r.values.code), r.id]));

    // Eight rows, one in each of eight platform batches of 4, get the same change (note
    // → "recounted"); two rows get changes of their own; two new rows sit 20 rows apart.
    const next = base.map((r) => [...r]);
    for (let i = 2; i < 40; i += 5) next[i]![2] = 'recounted';
    next[1]![1] = '1001';
    next[38]![1] = '1038';
    next.splice(30, 0, ['N-2', '7', 'new']);
    next.splice(10, 0, ['N-1', '5', 'new']);
    await h.writeFile('items.csv', csv(next));

    const before = h.emulator.requests.length;
    const run = await h.runJob('items');
    expect(run.record.status).toBe('completed');
    expect(run.report).toMatchObject({ read: 42, created: 2, updated: 10, unchanged: 30 });
    const writes = h.emulator.requests
      .slice(before)
      .filter((r) => r.method === 'POST' || r.method === 'PATCH' || r.method === 'DELETE')
      .filter((r) => !r.path.endsWith('/rows/list'));
    const count = (method: string, batch: boolean) =>
      writes.filter((r) => r.method === method && r.path.endsWith('/rows/batch') === batch).length;
    // The floor: ceil(2 / 4) creates + ceil(8 / 4) batch updates + 2 single updates.
    expect(count('POST', true)).toBe(1);
    expect(count('POST', false)).toBe(0);
    expect(count('PATCH', true)).toBe(2);
    expect(count('PATCH', false)).toBe(2);
    expect(writes).toHaveLength(5);

    // And every row is where it should be, once, the updated ones under their old ids.
    const rows = h.emulator.state.rows(ws);
    expect(rows).toHaveLength(42);
    const byCode = new Map(rows.map((r) => [String(r.values.code), r]));
    for (let i = 2; i < 40; i += 5) {
      expect(byCode.get(`I-${i}`)?.text.note).toBe('recounted');
      expect(byCode.get(`I-${i}`)?.id).toBe(ids.get(`I-${i}`));
    }
    expect(byCode.get('I-1')?.text.qty).toBe('1001');
    expect(byCode.get('I-38')?.text.qty).toBe('1038');
    expect(byCode.get('N-1')?.text).toMatchObject({ qty: '5', note: 'new' });
    expect(byCode.get('N-2')?.text).toMatchObject({ qty: '7', note: 'new' });
  });

  it('a reader restarted mid-run cuts the jobs it cut before: rows not yet written keep their job id', async () => {
    // Sixty rows exist; every second one changes and forty are new: seventy rows to
    // write, in jobs of 40 (batchSize 4), one of them written before the reader restarts.
    const rows = Array.from({ length: 100 }, (_, i) => [
      `R-${i}`,
      String(i),
      i < 60 && i % 2 === 0 ? 'changed' : 'old',
    ]);
    await h.writeFile('items.csv', csv(rows.slice(0, 60).map((r) => [r[0]!, r[1]!, 'old'])));
    expect((await h.runJob('items')).record.status).toBe('completed');
    await h.writeFile('items.csv', csv(rows));
    // No worker takes the jobs: the test looks at them, and plays the worker itself.
    await h.workers?.close();
    h.workers = undefined;

    const runId = `items-reread-${process.pid}`;
    const run = await h.rt.prepareRun('items', runId);
    const log = createLogger({ level: 'silent' });
    const ctx = createSyncContext(
      run.spec,
      run.prepared!,
      { runId, attempt: 1 },
      h.rt.syncDeps(run.client, log),
    );
    await ctx.index!.rebuild(readWorksheetKeys(run.client, run.prepared!.structure, run.prepared!.plan));
    const queues = createQueues(h.rt);
    try {
      const parent = await queues.runs.add('run', { runId, job: 'items', trigger: 'cli' }, { jobId: runId });
      const records: SourceRecord[] = rows.map((r, i) => ({
        data: { code: r[0], qty: r[1], note: r[2] },
        position: { index: i, line: i + 2 },
      }));
      const source = () => Readable.from(records) as AsyncIterable<SourceRecord>;
      const jobs = async (n: number) =>
        Promise.all(
          Array.from({ length: n }, (_, i) => Job.fromId<BatchJobData>(queues.batches, `${runId}-${i}`)),
        );
      const indexes = (job: Job<BatchJobData> | undefined) =>
        job === undefined ? undefined : batchRowIndexes(job.data);

      const first = await fanOutBatches(h.rt, queues.batches, parent, ctx, source());
      expect(first.batches).toBe(2);
      const before = await jobs(3);
      expect(before.map((j) => indexes(j)?.length)).toEqual([40, 30, undefined]);
      // Unchanged rows never reach a job: the reader settled them.
      expect(indexes(before[0])).toEqual([
        ...Array.from({ length: 30 }, (_, i) => i * 2),
        ...Array.from({ length: 10 }, (_, i) => 60 + i),
      ]);
      expect((await h.rt.runs.report(runId)).unchanged).toBe(30);

      // Job 0 is written and removed, as a completed job is; then the reader reads again.
      await writeBatch(ctx, batchRows(before[0]!.data));
      await before[0]!.remove();
      const again = (await Job.fromId<RunJobData>(queues.runs, runId))!;
      const second = await fanOutBatches(h.rt, queues.batches, again, ctx, source());
      expect(second.batches).toBe(2);
      const after = await jobs(3);
      // Nothing left to write in job 0's rows; job 1 holds the same rows under the same id.
      expect(after[0]).toBeUndefined();
      expect(indexes(after[1])).toEqual(indexes(before[1]));
      expect(after[2]).toBeUndefined();
    } finally {
      await queues.runs.obliterate({ force: true });
      await queues.batches.obliterate({ force: true });
      await queues.close();
    }
  });

  it('a reader that dies after storing where a job ends but before adding it: the re-read adds that job, every row lands once', async () => {
    const parts = h.createWorksheet({
      name: 'Parts',
      alias: 'parts',
      fields: [
        { name: 'Code', alias: 'code', type: '2', required: true, isTitle: true },
        { name: 'Qty', alias: 'qty', type: '6' },
      ],
    });
    await h.writeJob(
      'parts',
      `name: parts
source: { type: csv, path: ./parts.csv }
target: { worksheet: parts, mode: upsert, key: code, batchSize: 4, triggerWorkflow: false }
fields: { code: code, qty: qty }
`,
    );
    const runId = `parts-died-${process.pid}`;
    const run = await h.rt.prepareRun('parts', runId);
    const ctx = createSyncContext(
      run.spec,
      run.prepared!,
      { runId, attempt: 1 },
      h.rt.syncDeps(run.client, createLogger({ level: 'silent' })),
    );
    await ctx.index!.rebuild(readWorksheetKeys(run.client, run.prepared!.structure, run.prepared!.plan));
    const records: SourceRecord[] = Array.from({ length: 110 }, (_, i) => ({
      data: { code: `P-${i}`, qty: String(i) },
      position: { index: i, line: i + 2 },
    }));
    const source = () => Readable.from(records) as AsyncIterable<SourceRecord>;
    const queues = createQueues(h.rt);
    try {
      const parent = await queues.runs.add('run', { runId, job: 'parts', trigger: 'cli' }, { jobId: runId });
      // The process dies in the gap: job 1's end is stored, the job itself never added.
      const dying = Object.create(queues.batches, {
        add: {
          value: async (...args: Parameters<typeof queues.batches.add>) => {
            if (args[1].batchNo === 1) throw new Error('killed');
            return queues.batches.add(...args);
          },
        },
      }) as typeof queues.batches;
      await expect(fanOutBatches(h.rt, dying, parent, ctx, source())).rejects.toThrow('killed');
      const job0 = await Job.fromId<BatchJobData>(queues.batches, `${runId}-0`);
      expect(await Job.fromId(queues.batches, `${runId}-1`)).toBeUndefined();
      // A worker meanwhile writes job 0 (jobs of 40 rows: ten platform batches of 4).
      expect(batchRowIndexes(job0!.data)).toEqual(records.slice(0, 40).map((r) => r.position.index));
      await writeBatch(ctx, batchRows(job0!.data));
      await job0!.remove();

      // Restarted, the reader reads everything again: job 0's rows are done, job 1 is
      // added with the rows its stored end gives it, the rest follow.
      const again = (await Job.fromId<RunJobData>(queues.runs, runId))!;
      const read = await fanOutBatches(h.rt, queues.batches, again, ctx, source());
      expect(read.batches).toBe(3);
      const jobs = await Promise.all(
        [0, 1, 2].map((n) => Job.fromId<BatchJobData>(queues.batches, `${runId}-${n}`)),
      );
      expect(jobs[0]).toBeUndefined();
      expect(batchRowIndexes(jobs[1]!.data)).toEqual(records.slice(40, 80).map((r) => r.position.index));
      expect(batchRowIndexes(jobs[2]!.data)).toEqual(records.slice(80).map((r) => r.position.index));
      for (const job of jobs.slice(1)) await writeBatch(ctx, batchRows(job!.data));

      const rows = h.emulator.state.rows(parts);
      expect(rows).toHaveLength(110);
      expect(new Set(rows.map((r) => String(r.values.code))).size).toBe(110);
      expect((await h.rt.runs.report(runId)).created).toBe(110);
    } finally {
      await queues.runs.obliterate({ force: true });
      await queues.batches.obliterate({ force: true });
      await queues.close();
    }
  });
});
