/**
 * The dead-letter store's keys and how it reads through its indexes: which sorted set
 * covers a filter, and the matching entries scanned through it in order.
 */
import type { Redis } from 'ioredis';
import { ERROR_CATEGORIES } from '../../ground/errors.ts';
import type { ErrorCategory } from '../../ground/errors.ts';
import type { DeadLetterEntry } from './dead-letter-entry.ts';
import { scanIndex } from './dead-letter-scan.ts';
import type { ScanItem, ScanPosition } from './dead-letter-scan.ts';

/** Narrows a listing; every given criterion must match. */
export interface DeadLetterFilter {
  category?: ErrorCategory;
  job?: string;
  runId?: string;
}

/** Entries per script call: big enough to amortise round trips, small enough not to block Redis. */
export const BATCH = 500;

/** The store's keys, all under `${prefix}:dlq:`, and its reads through them. */
export interface DeadLetterIndex {
  redis: Redis;
  /** `${prefix}:dlq:`, which every key starts with. */
  base: string;
  /** The hash of entries (id → JSON). */
  entriesKey: string;
  /** The sorted set of every entry's id. */
  allKey: string;
  /** The entry stored as `raw`; an error naming the entry when it is not JSON. */
  parse: (id: string, raw: string) => DeadLetterEntry;
  /** The smallest index that covers one of the filter's criteria; the others are checked per entry. */
  pickIndex: (filter: DeadLetterFilter) => Promise<{ key: string; exact: boolean }>;
  /** Matching entries in order, a chunk at a time, each with its position. */
  scan: (
    filter: DeadLetterFilter,
    direction: 'asc' | 'desc',
    after: ScanPosition | undefined,
    chunk: number,
  ) => AsyncGenerator<Array<{ entry: DeadLetterEntry; position: ScanItem }>>;
}

function matches(entry: DeadLetterEntry, filter: DeadLetterFilter): boolean {
  return (
    (filter.category === undefined || entry.category === filter.category) &&
    (filter.job === undefined || entry.job === filter.job) &&
    (filter.runId === undefined || entry.runId === filter.runId)
  );
}

/** The keys of the store under `prefix`, and its reads through them. */
export function createDeadLetterIndex(redis: Redis, prefix: string): DeadLetterIndex {
  const base = `${prefix}:dlq:`;
  const entriesKey = `${base}entries`;
  const allKey = `${base}all`;

  function parse(id: string, raw: string): DeadLetterEntry {
    try {
      return JSON.parse(raw) as DeadLetterEntry;
    } catch (err) {
      throw new Error(`dead-letter store: entry "${id}" in ${entriesKey} is not valid JSON`, { cause: err });
    }
  }

  function checkFilter(filter: DeadLetterFilter): void {
    if (filter.category !== undefined && !(ERROR_CATEGORIES as readonly string[]).includes(filter.category)) {
      throw new Error(
        `dead-letter store: unknown category "${String(filter.category)}"; categories: ${ERROR_CATEGORIES.join(', ')}`,
      );
    }
  }

  /** The smallest index that covers one of the filter's criteria; the others are checked per entry. */
  async function pickIndex(filter: DeadLetterFilter): Promise<{ key: string; exact: boolean }> {
    checkFilter(filter);
    const candidates = [
      filter.runId === undefined ? undefined : `${base}run:${filter.runId}`,
      filter.job === undefined ? undefined : `${base}job:${filter.job}`,
      filter.category === undefined ? undefined : `${base}cat:${filter.category}`,
    ].filter((key): key is string => key !== undefined);
    const [only] = candidates;
    if (only === undefined) return { key: allKey, exact: true };
    if (candidates.length === 1) return { key: only, exact: true };
    const sizes = await Promise.all(candidates.map((key) => redis.zcard(key)));
    let best = 0;
    sizes.forEach((size, i) => {
      if (size < (sizes[best] ?? Infinity)) best = i;
    });
    return { key: candidates[best] ?? only, exact: false };
  }

  /** Matching entries in order, a chunk at a time, each with its position. */
  async function* scan(
    filter: DeadLetterFilter,
    direction: 'asc' | 'desc',
    after: ScanPosition | undefined,
    chunk: number,
  ): AsyncGenerator<Array<{ entry: DeadLetterEntry; position: ScanItem }>> {
    const { key } = await pickIndex(filter);
    for await (const items of scanIndex(redis, {
      index: key,
      entries: entriesKey,
      direction,
      after,
      chunk,
    })) {
      const found = items
        // '' is an index member whose entry was removed between the two reads: skip it.
        .filter((item) => item.raw !== '')
        .map((item) => ({ entry: parse(item.id, item.raw), position: item }))
        .filter(({ entry }) => matches(entry, filter));
      yield found;
    }
  }

  return { redis, base, entriesKey, allKey, parse, pickIndex, scan };
}
