import type { DeadLetterStore } from '../sync/state/dead-letter-store.ts';
import type { SourceRecord } from '../sync/types.ts';

/**
 * The dead letters of a replay, as a source: each entry's original record, re-mapped
 * with the job spec as it is now. Positions keep the original line; `index` is the
 * ordinal within the replay run (the unit its outcomes are kept by).
 */
export async function* deadLetterSource(
  store: DeadLetterStore,
  ids: readonly string[],
  _runId: string,
): AsyncGenerator<SourceRecord> {
  for (let i = 0; i < ids.length; i += 1) {
    const entry = await store.get(ids[i]!);
    if (entry === undefined) continue;
    yield { data: entry.source.data, position: { ...entry.source.position, index: i } };
  }
}
