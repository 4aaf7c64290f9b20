import type { DeadLetterEntry } from '../state/dead-letter-entry.ts';
import type { DeadLetterStore } from '../state/dead-letter-store.ts';
import type { SourceRecord } from '../model/types.ts';

/** Reads the source's current records with these source ids (`position.id`). */
export type ReadByIds = (ids: readonly string[]) => AsyncIterable<SourceRecord & { error?: unknown }>;

/** Entries looked up and re-read together: one source query per this many. */
const CHUNK = 500;

/**
 * The dead letters of a replay, as a source, re-mapped with the job spec as it is now.
 * Where the job's source can be read by id (`readByIds`: SQL with a keyColumn, a
 * worksheet) each row is read again as the source has it now, so a row fixed at the
 * source lands fixed; the stored record is used for an entry a person fixed by file
 * (`fixedAt`), one without a source id, a row the source no longer has, and every
 * other source. Positions keep the original line and id; `index` is the ordinal within
 * the replay run (the unit its outcomes are kept by, and how the run settles entries).
 */
export async function* deadLetterSource(
  store: DeadLetterStore,
  ids: readonly string[],
  _runId: string,
  readByIds?: ReadByIds,
): AsyncGenerator<SourceRecord> {
  for (let start = 0; start < ids.length; start += CHUNK) {
    const entries = await Promise.all(ids.slice(start, start + CHUNK).map((id) => store.get(id)));
    const current =
      readByIds === undefined ? new Map<string, Record<string, unknown>>() : await reread(entries, readByIds);
    for (const [j, entry] of entries.entries()) {
      if (entry === undefined) continue;
      const sourceId = entry.source.position.id;
      const fresh = sourceId === undefined ? undefined : current.get(sourceId);
      yield { data: fresh ?? entry.source.data, position: { ...entry.source.position, index: start + j } };
    }
  }
}

async function reread(
  entries: ReadonlyArray<DeadLetterEntry | undefined>,
  readByIds: ReadByIds,
): Promise<Map<string, Record<string, unknown>>> {
  const wanted = new Set<string>();
  for (const entry of entries) {
    const id = entry?.source.position.id;
    if (entry?.fixedAt === undefined && id !== undefined) wanted.add(id);
  }
  const found = new Map<string, Record<string, unknown>>();
  if (wanted.size === 0) return found;
  for await (const record of readByIds([...wanted])) {
    const id = record.position.id;
    // A record the source could not read (error set) keeps the stored one.
    if (id !== undefined && record.error === undefined && !found.has(id)) found.set(id, record.data);
  }
  return found;
}
