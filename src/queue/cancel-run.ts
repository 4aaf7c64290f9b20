import type { RunRecord, RunStore } from '../sync/state/run-store.ts';
import { TERMINAL_STATUSES } from '../sync/state/run-store.ts';
import { abandonRun } from './resume-run.ts';

/** What cancelling a run reads and writes. */
export interface CancelRunDeps {
  runs: RunStore;
}

/** What {@link cancelRun} did. */
export type CancelOutcome =
  | { kind: 'unknown' }
  /** Completed or skipped: nothing to stop. */
  | { kind: 'finished'; record: RunRecord }
  /** Already stopped (failed) and kept resumable: nothing more to do. */
  | { kind: 'stopped'; record: RunRecord }
  | { kind: 'cancelled'; record: RunRecord; abandoned: boolean };

/**
 * Stops a run wherever it is worked (`rowbridge cancel`, the dashboard's Cancel): it is
 * recorded failed with who stopped it, so its batch jobs not yet written find it finished
 * and write nothing, its run job fails at its next step, and a `run` watching it stops
 * its workers. Rows written stay written. It stays the job's resumable run, or with
 * `abandon` is given up as `run --fresh` gives one up (row outcomes dropped, lock freed).
 */
export async function cancelRun(
  rt: CancelRunDeps,
  runId: string,
  options: { abandon?: boolean; by: string },
): Promise<CancelOutcome> {
  const record = await rt.runs.get(runId);
  if (record === undefined) return { kind: 'unknown' };
  if (record.status === 'completed' || record.status === 'skipped') return { kind: 'finished', record };
  if (record.status === 'failed' && options.abandon !== true) return { kind: 'stopped', record };
  if (!TERMINAL_STATUSES.has(record.status)) {
    await rt.runs.fail(
      runId,
      options.abandon === true ? `abandoned by ${options.by}` : `cancelled by ${options.by}`,
    );
  }
  const failed = (await rt.runs.get(runId)) ?? record;
  if (options.abandon === true) {
    // Only when it is the job's resumable run (or holds its lock): another one stays.
    const resumable = await rt.runs.resumableRun(record.job);
    if (resumable === undefined || resumable === runId) await abandonRun(rt, failed);
    else {
      await rt.runs.releaseJob(record.job, runId);
      await rt.runs.dropRowState(runId);
    }
  }
  return { kind: 'cancelled', record: failed, abandoned: options.abandon === true };
}
