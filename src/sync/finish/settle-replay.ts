import type { DeadLetterStore } from '../state/dead-letter-store.ts';
import type { RunStore } from '../state/run-store.ts';
import { LANDED_OUTCOMES } from '../write/resolve-dead-letters.ts';

/** What settling a replay reads (the rows' outcomes) and settles (their dead letters). */
export interface SettleReplayDeps {
  runs: Pick<RunStore, 'getOutcomes' | 'tallyKey'>;
  deadLetters: Pick<DeadLetterStore, 'move' | 'resolve' | 'remove'>;
}

/**
 * Replayed dead letters settle once their row has an outcome. A row that landed
 * resolves its entry (counted in the report, once, even when its batch resolved it by
 * key already). A row that failed again keeps its entry's id: the replay's fresh entry,
 * with the new reason, takes it over. Any other outcome (update mode found no row) only
 * removes the entry. Each step is idempotent, so a retried finalizer does nothing twice.
 */
export async function settleReplay(
  deps: SettleReplayDeps,
  job: string,
  runId: string,
  ids: string[],
): Promise<void> {
  const { runs, deadLetters } = deps;
  const outcomes = await runs.getOutcomes(
    runId,
    ids.map((_, i) => i),
  );
  const landed: string[] = [];
  const other: string[] = [];
  for (const [i, id] of ids.entries()) {
    const o = outcomes.get(i);
    if (o === undefined || o === 'pending') continue;
    if (LANDED_OUTCOMES.has(o)) landed.push(id);
    else if (o.startsWith('dead:')) await deadLetters.move(`${runId}:${i}`, id);
    else other.push(id);
  }
  await deadLetters.resolve({ job, runId, tallyKey: runs.tallyKey(runId), ids: landed });
  await deadLetters.remove(other);
}
