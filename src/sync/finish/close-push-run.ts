/**
 * What a push run commits once every batch (and chunk) job of it is done, in the order
 * it commits it: the run checked whole, deletes mirrored, the cursor saved, replayed
 * dead letters settled, the structure remembered, the verdict recorded. The queue moves
 * the job (queue/run-finalize.ts); the run's state is decided here.
 */
import type { WorksheetStructure } from '../../api/types.ts';
import type { Logger } from '../../ground/logger.ts';
import { accountingError } from '../check/run-checks.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import type { createStructureSnapshots } from '../prepare/schema-drift.ts';
import type { DeadLetterStore } from '../state/dead-letter-store.ts';
import type { RunStore } from '../state/run-store.ts';
import { mirrorDeletes } from '../write/mirror-deletes.ts';
import type { FinalizeResult } from '../write/mirror-deletes.ts';
import { supersedeDeadLetters } from '../write/supersede-dead-letters.ts';
import type { SyncContext } from '../write/sync-context.ts';
import { verdict } from './run-verdict.ts';
import { settleReplay } from './settle-replay.ts';

/** What closing a push run reads and writes besides the run's context. */
export interface ClosePushRunDeps {
  runs: RunStore;
  deadLetters: DeadLetterStore;
  /** The structure each job's mapping last worked with: the next run compares against it. */
  snapshots: Pick<ReturnType<typeof createStructureSnapshots>, 'save'>;
  /** Runs `fn` with the platform requests it makes counted to the run. */
  withTraffic<T>(fn: () => Promise<T>): Promise<T>;
  /** A hint run's deletes: only the rows its hints named that the source no longer has. */
  hintDeletes(spec: JobSpec, ctx: SyncContext, runId: string): Promise<FinalizeResult>;
}

/** The push run being closed: what it read, and how it was started. */
export interface ClosingRun {
  runId: string;
  spec: JobSpec;
  ctx: SyncContext;
  structure: WorksheetStructure;
  log: Logger;
  /** The cursor the run's read reached (its record's), saved once every write is confirmed. */
  cursor: string | undefined;
  /** A hint run (webhook calls) deletes only what its hints named. */
  hintRun: boolean;
  /** Dead letters replayed instead of reading the source. */
  replayIds: string[] | undefined;
  /** A backfill: it re-reads history, and leaves the job's cursor where it was. */
  backfill: boolean;
  /** Mirror: delete past the safety threshold. */
  force: boolean;
}

/**
 * Commits a push run whose rows were all written or dead-lettered: returns the reason
 * it failed (recorded failed, resumable, nothing more changed), or undefined once its
 * verdict (`completed` or `unmet`) is recorded.
 */
export async function closePushRun(deps: ClosePushRunDeps, run: ClosingRun): Promise<string | undefined> {
  const { runs, deadLetters } = deps;
  const { runId, spec, ctx, log } = run;
  // Every row read has one outcome, or the run is no success (issue 27 §2): checked
  // before deletes and the cursor, so a miscounted run changes nothing more.
  const miscount = accountingError(await runs.report(runId));
  if (miscount !== undefined) {
    await runs.fail(runId, miscount);
    return miscount;
  }
  await runs.update(runId, { status: 'finalizing' });
  // A replay read dead letters, not the source: what it did not see is not gone.
  // A hint run deletes only the rows it named that the source no longer has.
  const result: FinalizeResult = run.hintRun
    ? await deps.withTraffic(() => deps.hintDeletes(spec, ctx, runId))
    : run.replayIds === undefined
      ? await deps.withTraffic(() => mirrorDeletes(spec, ctx, run.force))
      : { deleted: 0 };
  if (result.refused !== undefined) {
    await runs.fail(runId, result.refused);
    return result.refused;
  }
  if (
    spec.incremental !== undefined &&
    run.cursor !== undefined &&
    run.replayIds === undefined &&
    !run.hintRun &&
    !run.backfill
  ) {
    // Saved only now that every write the cursor covers is confirmed. A backfill
    // re-reads history and leaves the job's cursor where it was.
    await runs.setCursor(spec.name, run.cursor);
  }
  if (run.replayIds !== undefined) await settleReplay(deps, spec.name, runId, run.replayIds);
  const superseded = await supersedeDeadLetters(deadLetters, ctx.plan, spec.name, runId);
  if (superseded > 0) log.info({ superseded }, 'older dead letters of rows that failed again were replaced');
  await deps.snapshots.save(spec.name, run.structure, spec.mappings);
  await runs.update(runId, {
    ...verdict(spec, { ...(await runs.report(runId)), deleted: result.deleted }),
    deleted: result.deleted,
    finishedAt: new Date().toISOString(),
  });
  return undefined;
}
