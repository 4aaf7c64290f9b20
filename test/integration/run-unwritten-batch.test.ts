/**
 * docs/unfinished-runs.md: a batch job that fails
 * every attempt before writing must not let its run be recorded complete without its
 * rows, and `run JOB` must then write them. Walked from the CLI, with `rowbridge worker`
 * processes sharing the Redis: the batch jobs are held (their queue paused) while the run
 * reads, one of them is rewritten as another rowbridge would add it (a format no worker
 * here reads, as in batch-job-format.test.ts), and the queue goes on.
 */
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { localQueuePrefix } from '../../src/cli/local-run.ts';
import { createQueues } from '../../src/queue/queues.ts';
import { BATCH_ROWS_FORMAT, batchRows } from '../../src/sync/batch/batch-job-rows.ts';
import { killChildren, spawnCli, until, writeBackfillJob, writeLedgerJob } from '../helpers/cli-process.ts';
import type { CliProcess, Finished } from '../helpers/cli-process.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/** Rows of the ledger: its batchSize 50 makes batch jobs of 500 rows. */
const ROWS = 1500;
/** A job of another format: its rows cannot be counted. */
const UNCOUNTED = 'rows not counted: gone from Redis or in another format';
const UNREADABLE = `batch job data is not rows of format ${BATCH_ROWS_FORMAT}, the one this worker reads`;

describe('a batch job that fails every attempt without writing', { timeout: 90_000 }, () => {
  let h: Harness | undefined;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    killChildren(children);
    await h?.close();
    h = undefined;
  });

  function cli(args: string[]): CliProcess {
    return spawnCli(h!, children, args);
  }

  /** A command that must end by itself within `ms`: a run waiting forever fails the test here. */
  async function ended(command: CliProcess, ms = 45_000): Promise<Finished> {
    const timer = setTimeout(() => command.child.kill('SIGKILL'), ms);
    try {
      const done = await command.exited;
      if (done.code === null) throw new Error(`command still running after ${ms} ms:\n${done.stderr}`);
      return done;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The ledger job and `workers` worker processes; batch jobs are held until `release`.
   * `queues` are those of `run JOB` (the job's own) or, with `shared`, the workers'.
   */
  async function setUp(name: string, workers: number, queuesOf: 'run ledger' | 'shared' = 'run ledger') {
    // Two quick attempts: a job that no worker reads fails for good in well under a second.
    h = await createHarness(name, {}, { ROWBRIDGE_BATCH_ATTEMPTS: '2', ROWBRIDGE_BATCH_BACKOFF_MS: '10' });
    const ws = await writeLedgerJob(h, ROWS, 'upsert');
    const sharedQueues = createQueues(h.rt);
    const runQueues = createQueues({ ...h.rt, queuePrefix: localQueuePrefix(h.rt.queuePrefix, 'ledger') });
    const queues = queuesOf === 'shared' ? sharedQueues : runQueues;
    for (let i = 0; i < workers; i += 1) cli(['worker', '--concurrency', '2', '--no-schedules']);
    await queues.batches.pause();
    const all = [sharedQueues, runQueues];
    const entries = () => h!.emulator.state.rows(ws).map((r) => String(r.values.entry));
    return {
      queues,
      entries,
      close: () => Promise.all(all.map((q) => q.close())),
      /** Rewrites batch job `id` as another rowbridge would add it, lets the jobs go, and returns its entries. */
      async release(id: string): Promise<string[]> {
        const job = (await queues.batches.getJob(id))!;
        const lost = batchRows(job.data).map((r) => String(r.source.data.entry));
        await job.updateData({ ...job.data, format: BATCH_ROWS_FORMAT + 1 });
        await queues.batches.resume();
        return lost;
      },
      /** Every row but `lost` landed, once. */
      missingExactly(lost: string[]): void {
        const landed = entries();
        expect(landed).toHaveLength(ROWS - lost.length);
        expect(new Set(landed).size).toBe(landed.length);
        expect(landed.filter((e) => lost.includes(e))).toEqual([]);
      },
      /** `run JOB` resumes the run: every row lands once and the report counts each once. */
      async resumeWritesAll(job: string, runId: string): Promise<void> {
        const again = await ended(cli(['run', job, '--json']));
        expect(again.code, again.stderr).toBe(0);
        expect(again.stderr).toContain(`resuming run ${runId}`);
        const { run, report } = JSON.parse(again.stdout) as {
          run: { runId: string; status: string };
          report: Record<string, number>;
        };
        expect(run).toMatchObject({ runId, status: 'completed' });
        const keys = entries();
        expect(keys).toHaveLength(ROWS);
        expect(new Set(keys).size).toBe(ROWS);
        expect(report).toMatchObject({ created: ROWS, updated: 0, unchanged: 0, deadLetteredTotal: 0 });
        expect(await h!.rt.runs.resumableRun(job)).toBeUndefined();
        // Nothing of the failed job is left behind in the queues, the workers' or run's.
        const local = createQueues({ ...h!.rt, queuePrefix: localQueuePrefix(h!.rt.queuePrefix, job) });
        try {
          for (const q of [sharedQueues, local]) {
            expect(await q.batches.getFailedCount()).toBe(0);
            expect(await q.runs.getFailedCount()).toBe(0);
          }
        } finally {
          await local.close();
        }
      },
    };
  }

  /** `run ledger` whose second batch job no worker reads: its run id, the job's entries and how `run` ended. */
  async function failedLedgerRun(t: Awaited<ReturnType<typeof setUp>>) {
    const first = cli(['run', 'ledger']);
    // The run has read everything and waits for its three batch jobs.
    let runId = '';
    await until(
      async () => {
        const [run] = await h!.rt.runs.list({ job: 'ledger' });
        runId = run?.runId ?? '';
        const queued = run === undefined ? undefined : await t.queues.runs.getJob(run.runId);
        return (await queued?.getState()) === 'waiting-children';
      },
      30_000,
      'the run to read its source',
    );
    expect(await t.queues.batches.getWaitingCount()).toBe(3);
    const lost = await t.release(`${runId}-1`);
    expect(lost).toHaveLength(500);
    return { runId, lost, failed: await ended(first) };
  }

  it('fails the run (exit 1, resumable, that job rows missing), and `run JOB` writes them: every row once, counted once', async () => {
    // A worker process shares the Redis; it takes nothing of `run`'s (its queues are its own).
    const t = await setUp('unwritten-batch', 1);
    try {
      const { runId, lost, failed } = await failedLedgerRun(t);
      expect(failed.code, failed.stderr).toBe(1);
      expect(failed.stdout).toContain(
        `run ${runId} (ledger): failed - 1 batch job (${UNCOUNTED}) failed without being written: ${UNREADABLE}`,
      );
      expect(failed.stdout).toContain('run `rowbridge run ledger` to retry them');
      // Exactly that job's rows are missing, and the report does not count them.
      t.missingExactly(lost);
      expect(failed.stdout).toMatch(/created +1000\n/);
      expect((await h!.rt.runs.get(runId))!.status).toBe('failed');
      expect(await h!.rt.runs.resumableRun('ledger')).toBe(runId);

      // This version reads what it adds: the resumed run reads the failed job's rows again.
      await t.resumeWritesAll('ledger', runId);
    } finally {
      await t.close();
    }
  });

  it('resumes it too when its run job was cleaned from the queue (failed jobs are trimmed)', async () => {
    const t = await setUp('unwritten-trimmed', 0);
    try {
      const { runId, lost, failed } = await failedLedgerRun(t);
      expect(failed.code, failed.stderr).toBe(1);
      t.missingExactly(lost);
      // What removeOnFail's trimming (or a clean in bull-board) does: the run job goes,
      // its failed batch job stays. The job is moved to failed as `run` exits: under load,
      // a moment after.
      let state = '';
      await until(
        async () => (state = await t.queues.runs.getJobState(runId)) === 'failed',
        10_000,
        'the run job failed',
      ).catch((err: Error) => {
        throw new Error(`${err.message} (it is ${state})`);
      });
      expect(await t.queues.runs.clean(0, 1000, 'failed')).toEqual([runId]);
      expect(await t.queues.batches.getFailedCount()).toBe(1);
      await t.resumeWritesAll('ledger', runId);
    } finally {
      await t.close();
    }
  });

  it('in a backfill, fails the run over the chunk whose batch job failed, and `run JOB` writes its rows once', async () => {
    // A backfill is worked by the workers: two processes share it.
    const t = await setUp('unwritten-chunk', 2, 'shared');
    try {
      await writeBackfillJob(h!);
      const enqueued = await ended(
        cli(['enqueue', 'backfill', '--from', '0', '--to', String(ROWS - 1), '--chunks', '2', '--json']),
      );
      expect(enqueued.code, enqueued.stderr).toBe(0);
      const { runId } = JSON.parse(enqueued.stdout) as { runId: string };
      // Both chunks have read their half (750 rows: jobs of 500 and 250) and wait for them.
      await until(
        async () => {
          const states = await Promise.all(
            [0, 1].map(async (n) => (await t.queues.runs.getJob(`${runId}-chunk${n}`))?.getState()),
          );
          return states.every((s) => s === 'waiting-children');
        },
        30_000,
        'both chunks to read their range',
      );
      expect(await t.queues.batches.getWaitingCount()).toBe(4);
      const lost = await t.release(`${runId}-chunk1-0`);
      expect(lost).toHaveLength(500);

      expect((await h!.waitForRun(runId, 45_000)).record.status).toBe('failed');
      const status = await ended(cli(['status', runId]));
      expect(status.stdout).toContain(
        `run ${runId} (backfill): failed - 1 batch job (${UNCOUNTED}) failed without being written: ${UNREADABLE}`,
      );
      expect(status.stdout).toMatch(/created +1000\n/);
      t.missingExactly(lost);

      await t.resumeWritesAll('backfill', runId);
    } finally {
      await t.close();
    }
  });
});
