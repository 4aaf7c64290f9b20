/**
 * Dead letters narrowed by field and error code besides the store's own criteria (job,
 * category, run). The store indexes only the latter, so field and code are checked per
 * entry while paging through the smallest index; a page stops after `maxScan` entries
 * even when it is not full, so a rare field never makes one request read the whole store.
 */
import type { DeadLetterEntry } from '../../sync/state/dead-letter-entry.ts';
import type { DeadLetterFilter, DeadLetterStore } from '../../sync/state/dead-letter-store.ts';

/** The dead-letters page's filter. */
export interface DeadLetterQuery extends DeadLetterFilter {
  /** The target field the entry names (exactly). */
  field?: string;
  /** The platform error code. */
  errorCode?: number;
}

/** Whether an entry passes the criteria the store does not index. */
export function matchesQuery(entry: DeadLetterEntry, query: DeadLetterQuery): boolean {
  return (
    (query.field === undefined || entry.field === query.field) &&
    (query.errorCode === undefined || entry.errorCode === query.errorCode)
  );
}

/** The store's part of a query. */
export function storeFilter(query: DeadLetterQuery): DeadLetterFilter {
  return {
    ...(query.job === undefined ? {} : { job: query.job }),
    ...(query.category === undefined ? {} : { category: query.category }),
    ...(query.runId === undefined ? {} : { runId: query.runId }),
  };
}

/**
 * One page of matching entries, newest first. Every entry a store page returns is
 * either shown or skipped as not matching, so the store's cursor is exactly where the
 * next page starts (a page narrowed by field or code may hold up to 99 more than `limit`).
 */
export async function findDeadLetters(
  store: Pick<DeadLetterStore, 'list'>,
  query: DeadLetterQuery,
  options: { limit: number; cursor?: string | undefined; maxScan?: number },
): Promise<{ entries: DeadLetterEntry[]; next?: string }> {
  const filter = storeFilter(query);
  const narrowed = query.field !== undefined || query.errorCode !== undefined;
  const maxScan = options.maxScan ?? 5000;
  const entries: DeadLetterEntry[] = [];
  let cursor = options.cursor;
  let scanned = 0;
  for (;;) {
    const want = narrowed ? Math.max(options.limit - entries.length, 100) : options.limit - entries.length;
    const size = Math.min(want, maxScan - scanned, 1000);
    const page = await store.list({ ...filter, limit: size, ...(cursor === undefined ? {} : { cursor }) });
    scanned += page.entries.length;
    for (const entry of page.entries) {
      if (matchesQuery(entry, query)) entries.push(entry);
    }
    cursor = page.next;
    if (cursor === undefined) return { entries };
    if (entries.length >= options.limit || scanned >= maxScan) return { entries, next: cursor };
  }
}

/** Every matching entry, oldest first (the CSV export). */
export async function* iterateDeadLetters(
  store: Pick<DeadLetterStore, 'iterate'>,
  query: DeadLetterQuery,
): AsyncGenerator<DeadLetterEntry> {
  for await (const entry of store.iterate(storeFilter(query))) if (matchesQuery(entry, query)) yield entry;
}
