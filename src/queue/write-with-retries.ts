/**
 * Writing one batch of change-capture changes until it is written: a platform that throttles
 * or is away is waited for (the stream stays paused meanwhile); a refusal no retry can change
 * stops the stream. Shared by the snapshot and the stream loop of the CDC consumer.
 */
import { policyOf } from '../ground/errors.ts';
import type { CdcState } from '../sync/cdc/cdc-state.ts';
import { writeChanges } from '../sync/cdc/write-changes.ts';
import type { Change } from '../sync/cdc/write-changes.ts';
import type { WorksheetKeys } from '../sync/cdc/apply-truncate.ts';
import type { JobSpec } from '../sync/job-spec/job-spec-schema.ts';
import type { SyncContext } from '../sync/write/sync-context.ts';
import type { Logger } from '../ground/logger.ts';

/** The counters of a consumer's summary that each written batch adds to. */
export interface CdcWriteTally {
  changes: number;
  deleted: number;
  deadLettered: number;
}

/** The captured table: its key column, and how a TRUNCATE reads the worksheet's keys. */
export interface CdcWriteTable {
  table: string;
  keyColumn: string;
  worksheetKeys?: WorksheetKeys;
}

/** Writes `changes` (rows keyed by `table.keyColumn`), retrying with backoff, and adds them to `tally`. */
export async function writeWithRetries(
  ctx: SyncContext,
  spec: JobSpec,
  table: CdcWriteTable,
  state: CdcState,
  changes: readonly Change[],
  tally: CdcWriteTally,
  signal: AbortSignal,
  log: Logger,
): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      const done = await writeChanges(
        ctx,
        {
          state,
          table: table.table,
          keyColumn: table.keyColumn,
          worksheetKeys: table.worksheetKeys,
          deletes: spec.target?.deletes === 'both',
          permanentDelete: spec.options.permanentDelete,
        },
        changes,
      );
      tally.changes += changes.length;
      tally.deleted += done.deleted;
      tally.deadLettered += done.deadLettered;
      return;
    } catch (err) {
      const policy = policyOf(err);
      if (policy.batch === 'stop-run' || signal.aborted) throw err;
      const delayMs = Math.min(30_000, 500 * 2 ** Math.min(attempt, 6));
      log.warn(
        { err: { message: (err as Error).message }, category: policy.category, delayMs },
        'batch of changes not written; retrying',
      );
      await new Promise((r) => setTimeout(r, delayMs));
    }
  }
}
