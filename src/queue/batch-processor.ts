import type { Job } from 'bullmq';
import { createSyncContext } from '../sync/write/create-sync-context.ts';
import type { PreparedRun } from '../sync/prepare/prepare-run.ts';
import type { SyncContext } from '../sync/write/sync-context.ts';
import { TERMINAL_STATUSES } from '../sync/state/run-store.ts';
import { batchRows } from '../sync/batch/batch-job-rows.ts';
import { resolveLanded } from '../sync/write/resolve-dead-letters.ts';
import { deadLetterRows, writeBatch } from '../sync/write/write-batch.ts';
import { isRedisOutage } from '../ground/redis-outage.ts';
import { briefly, decideBatchFailure, delayJob } from './error-policy.ts';
import { classifyError } from '../ground/errors.ts';
import type { BatchJobData } from './queues.ts';
import type { Settings } from '../../config/settings.ts';
import type { Logger } from '../ground/logger.ts';
import type { DeadLetterStore } from '../sync/state/dead-letter-store.ts';
import type { RunStore } from '../sync/state/run-store.ts';
import type { PrepareRun, SyncDepsFor, Traffic, WithTraffic } from './runtime-types.ts';

/** What a batch worker reads a run with and writes its rows through. */
export interface BatchProcessorDeps {
  logger: Logger;
  /** The run's spec, client and plan, from the run's snapshot. */
  prepareRun: PrepareRun;
  runs: RunStore;
  deadLetters: DeadLetterStore;
  settings: Pick<Settings, 'batchAttempts'>;
  syncDeps: SyncDepsFor;
  withTraffic: WithTraffic;
}

export interface BatchSummary {
  batchNo: number;
  rows: number;
  /** Rows of the batch by outcome. */
  outcomes: Record<string, number>;
  skippedBecauseRunStopped?: boolean;
}

/**
 * Processes batch jobs. The prepared run (spec, structure and plan from the run's
 * snapshot: src/sync/prepare/prepare-run.ts) is kept per process for a few runs, so a batch
 * costs no structure request and writes with the mapping its run started with; the
 * rows and their outcomes live in Redis, so any worker on any machine can take any batch.
 */
export function createBatchProcessor(
  rt: BatchProcessorDeps,
): (job: Job<BatchJobData>, token?: string) => Promise<BatchSummary> {
  const prepared = new Map<string, Promise<PreparedRun>>();

  function prepare(runId: string, jobName: string): Promise<PreparedRun> {
    let entry = prepared.get(runId);
    if (entry === undefined) {
      entry = rt.prepareRun(jobName, runId);
      entry.catch(() => prepared.delete(runId));
      prepared.set(runId, entry);
      // Keep the cache small: runs end, and a long-lived worker sees many.
      if (prepared.size > 8) prepared.delete(prepared.keys().next().value!);
    }
    return entry;
  }

  return async function processBatch(job, token) {
    const { runId, batchNo } = job.data;
    // Rows in another format throw here, before anything is written: BullMQ keeps the job
    // failed with its rows after its attempts, never completed with none written.
    const rows = batchRows(job.data);
    const record = await rt.runs.get(runId);
    const summary = (outcomes: Record<string, number>): BatchSummary => ({
      batchNo,
      rows: rows.length,
      outcomes,
    });
    if (record === undefined || TERMINAL_STATUSES.has(record.status)) {
      // The run stopped (auth, permission, quota...): its remaining rows are not written
      // and not lost either: the cursor did not move, the next run reads them again.
      return { ...summary({}), skippedBecauseRunStopped: true };
    }
    const log = rt.logger.child({ job: job.data.job, runId, batch: batchNo });
    const traffic: Traffic = { requests: 0, throttled: 0, retries: 0, run: { job: job.data.job, runId } };
    let ctx: SyncContext | undefined;
    try {
      const run = await rt.withTraffic(traffic, () => prepare(runId, job.data.job));
      ctx = createSyncContext(
        run.spec,
        run.prepared!,
        { runId, attempt: job.attemptsMade + 1 },
        {
          ...rt.syncDeps(run.client, log),
          full: record.compare === 'full',
          indexComplete: record.keyMatch !== 'index',
        },
      );
      const context = ctx;
      const outcomes = await rt.withTraffic(traffic, () => writeBatch(context, rows));
      await resolveLanded(rt, { job: job.data.job, runId }, rows, outcomes);
      const counts: Record<string, number> = {};
      for (const outcome of outcomes.values()) counts[outcome] = (counts[outcome] ?? 0) + 1;
      return summary(counts);
    } catch (err) {
      const action = decideBatchFailure(err, {
        attemptsMade: job.attemptsMade,
        maxAttempts: job.opts.attempts ?? rt.settings.batchAttempts,
        pauses: job.data.pauses ?? 0,
      });
      // A stack only where it helps: an error nobody classified (a bug). A Redis that went
      // away fails every batch alike, and the platform's answers carry their code.
      const unexplained = action.kind === 'retry' && classifyError(err) === 'unknown' && !isRedisOutage(err);
      log.warn({ err: unexplained ? err : briefly(err), action: action.kind }, 'batch failed');
      switch (action.kind) {
        case 'stop-run':
          await rt.runs.fail(runId, action.message);
          return { ...summary({}), skippedBecauseRunStopped: true };
        case 'delay':
          if (action.reason === 'app-unavailable')
            await job.updateData({ ...job.data, pauses: (job.data.pauses ?? 0) + 1 });
          return delayJob(job, token, action.delayMs);
        case 'retry':
          throw err;
        case 'dead-letter': {
          if (ctx === undefined) throw err;
          // Last attempt: every row without a final outcome goes to the dead-letter store.
          const known = await rt.runs.getOutcomes(
            runId,
            rows.map((r) => r.index),
          );
          await resolveLanded(rt, { job: job.data.job, runId }, rows, known);
          const open = rows.filter((r) => {
            const o = known.get(r.index);
            return o === undefined || o === 'pending';
          });
          await deadLetterRows(ctx, open, action.category, {
            message: action.message,
            ...(action.errorCode === undefined ? {} : { errorCode: action.errorCode }),
          });
          return summary({ [`dead:${action.category}`]: open.length });
        }
      }
    } finally {
      if (traffic.requests + traffic.retries > 0) await rt.runs.addTraffic(runId, traffic);
    }
  };
}
