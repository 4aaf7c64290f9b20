/**
 * The finalizing step of a push run, once its batch (and chunk) jobs are done: the
 * queue's part. A run a batch stopped, or whose children failed with rows unwritten,
 * fails here; the rest of what a finished run commits is sync/finish/close-push-run.ts.
 */
import { UnrecoverableError } from 'bullmq';
import type { WorksheetStructure } from '../api/types.ts';
import { closePushRun } from '../sync/finish/close-push-run.ts';
import type { ClosePushRunDeps } from '../sync/finish/close-push-run.ts';
import type { JobSpec } from '../sync/job-spec/job-spec-schema.ts';
import type { RunRecord, RunStore } from '../sync/state/run-store.ts';
import type { SyncContext } from '../sync/write/sync-context.ts';
import { describeUnwritten, findUnwritten } from './failed-children.ts';
import type { RunQueues } from './failed-children.ts';
import type { HintRuns } from './hint-run.ts';
import type { RunFinish } from './run-finish.ts';
import type { RunScope } from './run-scope.ts';
import type { Traffic } from './runtime-types.ts';

/** What finalizing a run reads and writes besides the run itself. */
export interface RunFinalizeDeps {
  runs: RunStore;
  deadLetters: ClosePushRunDeps['deadLetters'];
  /** Attributes client traffic to a run while `fn` runs. */
  withTraffic<T>(traffic: Traffic, fn: () => Promise<T>): Promise<T>;
  queues: RunQueues;
  hints: Pick<HintRuns, 'finish'>;
  snapshots: ClosePushRunDeps['snapshots'];
  finish: RunFinish['finish'];
}

/** Ends a push run whose children are done: `completed`, `unmet`, or failed resumable. */
export async function finalizeRun(
  deps: RunFinalizeDeps,
  scope: RunScope,
  ctx: SyncContext,
  spec: JobSpec,
  structure: WorksheetStructure,
): Promise<RunRecord | undefined> {
  const { runs, queues, hints, finish } = deps;
  const { job, runId, log, traffic } = scope;
  const current = await runs.get(runId);
  if (current?.status === 'failed') {
    // A batch stopped the run (auth, permission, quota...): the queue job fails too.
    await finish();
    throw new UnrecoverableError(current.message ?? 'the run was stopped');
  }
  // A batch or chunk job that failed every attempt did not hold the run up (its
  // failure is ignored so that the others go on), but its rows were not written: the
  // run fails resumable, before deletes or the cursor, and a resume writes them.
  const unwritten = await findUnwritten(job, queues, runs, runId);
  if (unwritten !== undefined) {
    const message = describeUnwritten(unwritten, job.data.job);
    await runs.fail(runId, message);
    await finish();
    throw new UnrecoverableError(message);
  }
  const failed = await closePushRun(
    {
      runs,
      deadLetters: deps.deadLetters,
      snapshots: deps.snapshots,
      withTraffic: (fn) => deps.withTraffic(traffic, fn),
      hintDeletes: (...args) => hints.finish(...args),
    },
    {
      runId,
      spec,
      ctx,
      structure,
      log,
      cursor: current?.cursor,
      hintRun: job.data.trigger === 'hook',
      replayIds: job.data.replayIds,
      backfill: job.data.range !== undefined,
      force: job.data.force === true,
    },
  );
  if (failed !== undefined) {
    await finish();
    throw new UnrecoverableError(failed);
  }
  return finish();
}
