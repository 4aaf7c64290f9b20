import { keyOfRecord } from '../read/key-of-record.ts';
import type { MappingPlan } from '../mapping/plan-types.ts';
import type { DeadLetterEntry } from '../state/dead-letter-entry.ts';
import type { DeadLetterStore } from '../state/dead-letter-store.ts';

/**
 * Which source row a dead letter is about: the source's own id (a primary key, a row
 * id), else the row's key, else its line. Undefined when none is known.
 */
function rowIdentity(plan: MappingPlan, entry: DeadLetterEntry): string | undefined {
  const { position, data } = entry.source;
  if (position.id !== undefined) return `id:${position.id}`;
  const key = keyOfRecord(plan, data);
  if (key !== undefined) return `key:${key}`;
  return position.line === undefined ? undefined : `line:${position.line}`;
}

/**
 * A row that fails again in a later run replaces its older dead letters, so a scheduled
 * job that re-reads a bad row every quarter hour keeps one entry for it (with the latest
 * reason and run) instead of one per run. Returns how many older entries were removed.
 */
export async function supersedeDeadLetters(
  store: DeadLetterStore,
  plan: MappingPlan,
  job: string,
  runId: string,
): Promise<number> {
  const fresh = new Set<string>();
  for await (const entry of store.iterate({ runId })) {
    const identity = rowIdentity(plan, entry);
    if (identity !== undefined) fresh.add(identity);
  }
  if (fresh.size === 0) return 0;
  const stale: string[] = [];
  const unindexed: Array<{ entry: DeadLetterEntry; key: string | undefined }> = [];
  for await (const entry of store.iterate({ job })) {
    if (entry.runId === runId) continue;
    const identity = rowIdentity(plan, entry);
    if (identity !== undefined && fresh.has(identity)) stale.push(entry.id);
    // Entries from before the row index (no key kept): indexed while this scan reads them
    // anyway, so that their row landing in a later run resolves them as it does newer ones.
    else if (entry.key === undefined && identity !== undefined && !identity.startsWith('line:'))
      unindexed.push({ entry, key: keyOfRecord(plan, entry.source.data) });
  }
  if (unindexed.length > 0) await store.adopt(unindexed);
  for (let i = 0; i < stale.length; i += 500) await store.remove(stale.slice(i, i + 500));
  return stale.length;
}
