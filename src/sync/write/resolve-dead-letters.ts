import type { RowToWrite } from '../batch/batch-row.ts';
import { rowIdentity } from '../state/dead-letter-entry.ts';
import type { DeadLetterStore } from '../state/dead-letter-store.ts';
import type { RowOutcome, RunStore } from '../state/run-store.ts';

/** Outcomes that mean the row is in the worksheet as the source has it now. */
export const LANDED_OUTCOMES: ReadonlySet<RowOutcome> = new Set(['created', 'updated', 'unchanged']);

/**
 * Rows that landed resolve the job's older dead letters about the same row (by the
 * source's id, else the row's key): those leave the store and the run's report counts
 * them as `resolved`. One script call per batch through the store's row index, never a
 * scan; a retried batch finds them gone and counts nothing twice. Resolves to the count.
 */
export async function resolveLanded(
  stores: { deadLetters: DeadLetterStore; runs: RunStore },
  run: { job: string; runId: string },
  rows: readonly Pick<RowToWrite, 'index' | 'position' | 'key'>[],
  outcomes: ReadonlyMap<number, RowOutcome>,
): Promise<number> {
  const identities: string[] = [];
  for (const row of rows) {
    const outcome = outcomes.get(row.index);
    if (outcome === undefined || !LANDED_OUTCOMES.has(outcome)) continue;
    const { position, key } = row;
    const identity = rowIdentity(position, key);
    if (identity !== undefined) identities.push(identity);
  }
  if (identities.length === 0) return 0;
  return stores.deadLetters.resolve({ ...run, tallyKey: stores.runs.tallyKey(run.runId), identities });
}
