/**
 * The finalizing step of a push run, once its batch (and chunk) jobs are done: the run
 * checked whole, deletes mirrored, the cursor saved, replayed dead letters settled. Kept
 * apart from the read so that the order of what a finished run commits is read in one place.
 */
import { UnrecoverableError } from 'bullmq';
import type { WorksheetStructure } from '../api/types.ts';
import { mirrorDeletes } from '../sync/write/mirror-deletes.ts';
import type { JobSpec } from '../sync/job-spec/job-spec-schema.ts';
import { LANDED_OUTCOMES } from '../sync/write/resolve-dead-letters.ts';
import { accountingError } from '../sync/check/run-checks.ts';
import type { createStructureSnapshots } from '../sync/prepare/schema-drift.ts';
import type { RunRecord } from '../sync/state/run-store.ts';
import { supersedeDeadLetters } from '../sync/write/supersede-dead-letters.ts';
import type { SyncContext } from '../sync/write/sync-context.ts';
import { describeUnwritten, findUnwritten } from './failed-children.ts';
import type { RunQueues } from './failed-children.ts';
import type { HintRuns } from './hint-run.ts';
import type { RunFinish } from './run-finish.ts';
import type { RunScope } from './run-scope.ts';
import { verdict } from './run-verdict.ts';
import type { Runtime } from './runtime-types.ts';

/** What finalizing a run reads and writes besides the run itself. */
export interface RunFinalizeDeps {
  rt: Pick<Runtime, 'runs' | 'deadLetters' | 'withTraffic'>;
  queues: RunQueues;
  hints: Pick<HintRuns, 'finish'>;
  snapshots: Pick<ReturnType<typeof createStructureSnapshots>, 'save'>;
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
  const { rt, queues, hints, snapshots, finish } = deps;
  const { job, runId, log, traffic } = scope;
  const current = await rt.runs.get(runId);
  if (current?.status === 'failed') {
    // A batch stopped the run (auth, permission, quota...): the queue job fails too.
    await finish();
    throw new UnrecoverableError(current.message ?? 'the run was stopped');
  }
  // A batch or chunk job that failed every attempt did not hold the run up (its
  // failure is ignored so that the others go on), but its rows were not written: the
  // run fails resumable, before deletes or the cursor, and a resume writes them.
  const unwritten = await findUnwritten(job, queues, rt.runs, runId);
  if (unwritten !== undefined) {
    const message = describeUnwritten(unwritten, job.data.job);
    await rt.runs.fail(runId, message);
    await finish();
    throw new UnrecoverableError(message);
  }
  // Every row read has one outcome, or the run is no success (issue 27 §2): checked
  // before deletes and the cursor, so a miscounted run changes nothing more.
  const miscount = accountingError(await rt.runs.report(runId));
  if (miscount !== undefined) {
    await rt.runs.fail(runId, miscount);
    await finish();
    throw new UnrecoverableError(miscount);
  }
  await rt.runs.update(runId, { status: 'finalizing' });
  // A replay read dead letters, not the source: what it did not see is not gone.
  // A hint run deletes only the rows it named that the source no longer has.
  const result: { deleted: number; refused?: string } =
    job.data.trigger === 'hook'
      ? await rt.withTraffic(traffic, () => hints.finish(spec, ctx, runId))
      : job.data.replayIds === undefined
        ? await rt.withTraffic(traffic, () => mirrorDeletes(spec, ctx, job.data.force === true))
        : { deleted: 0 };
  if (result.refused !== undefined) {
    await rt.runs.fail(runId, result.refused);
    await finish();
    throw new UnrecoverableError(result.refused);
  }
  if (
    spec.incremental !== undefined &&
    current?.cursor !== undefined &&
    job.data.replayIds === undefined &&
    job.data.trigger !== 'hook' &&
    job.data.range === undefined
  ) {
    // Saved only now that every write the cursor covers is confirmed. A backfill
    // re-reads history and leaves the job's cursor where it was.
    await rt.runs.setCursor(spec.name, current.cursor);
  }
  if (job.data.replayIds !== undefined) await settleReplay(rt, spec.name, runId, job.data.replayIds);
  const superseded = await supersedeDeadLetters(rt.deadLetters, ctx.plan, spec.name, runId);
  if (superseded > 0) log.info({ superseded }, 'older dead letters of rows that failed again were replaced');
  // The structure this mapping last worked with: the next run compares against it.
  await snapshots.save(spec.name, structure, spec.mappings);
  await rt.runs.update(runId, {
    ...verdict(spec, { ...(await rt.runs.report(runId)), deleted: result.deleted }),
    deleted: result.deleted,
    finishedAt: new Date().toISOString(),
  });
  return finish();
}

/**
 * Replayed dead letters settle once their row has an outcome. A row that landed
 * resolves its entry (counted in the report, once, even when its batch resolved it by
 * key already). A row that failed again keeps its entry's id: the replay's fresh entry,
 * with the new reason, takes it over. Any other outcome (update mode found no row) only
 * removes the entry. Each step is idempotent, so a retried finalizer does nothing twice.
 */
async function settleReplay(
  rt: Pick<Runtime, 'runs' | 'deadLetters'>,
  job: string,
  runId: string,
  ids: string[],
): Promise<void> {
  const outcomes = await rt.runs.getOutcomes(
    runId,
    ids.map((_, i) => i),
  );
  const landed: string[] = [];
  const other: string[] = [];
  for (const [i, id] of ids.entries()) {
    const o = outcomes.get(i);
    if (o === undefined || o === 'pending') continue;
    if (LANDED_OUTCOMES.has(o)) landed.push(id);
    else if (o.startsWith('dead:')) await rt.deadLetters.move(`${runId}:${i}`, id);
    else other.push(id);
  }
  await rt.deadLetters.resolve({ job, runId, tallyKey: rt.runs.tallyKey(runId), ids: landed });
  await rt.deadLetters.remove(other);
}
