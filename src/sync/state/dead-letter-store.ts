/**
 * Dead letters in Redis, by category (issue #4). Entries are JSON in one hash; sorted
 * sets (score = createdAt ms) index them overall, per category, per job and per run.
 * Adds and removes are Lua scripts, so the indexes always agree with the entries.
 *
 * Keys, all under `${prefix}:dlq:`: `entries` (hash id → JSON), `all`, `cat:<category>`,
 * `job:<job>`, `run:<runId>` (sorted sets of ids), `row:<job>` (hash: row identity → ids,
 * so a row that lands finds its dead letters without a scan).
 */
import type { Redis } from 'ioredis';
import { ERROR_CATEGORIES } from '../../ground/errors.ts';
import type { ErrorCategory } from '../../ground/errors.ts';
import type { DeadLetterEntry } from './dead-letter-entry.ts';
import { BATCH, createDeadLetterIndex } from './dead-letter-index.ts';
import type { DeadLetterFilter } from './dead-letter-index.ts';
import { decodeCursor, encodeCursor } from './dead-letter-scan.ts';
import type { ScanItem } from './dead-letter-scan.ts';
import { createDeadLetterWrites } from './dead-letter-writes.ts';
import type { DeadLetterWrites } from './dead-letter-writes.ts';

export type { DeadLetterFilter };

/** Which dead letters a replay re-maps and re-sends: the ids given, or all matching the filter. */
export interface DeadLetterSelection {
  ids?: string[];
  filter?: DeadLetterFilter;
}

/** Dead letters: what {@link DeadLetterWrites} changes, and the reads below. */
export interface DeadLetterStore extends DeadLetterWrites {
  /** Newest first, paged by an opaque cursor. `limit` defaults to 50 and is capped at 1000. */
  list(
    filter?: DeadLetterFilter & { limit?: number; cursor?: string },
  ): Promise<{ entries: DeadLetterEntry[]; next?: string }>;
  get(id: string): Promise<DeadLetterEntry | undefined>;
  /** All entries matching (for replay), oldest first: an async iterator so 100k entries stream. Removing yielded entries meanwhile is safe. */
  iterate(filter?: DeadLetterFilter): AsyncGenerator<DeadLetterEntry>;
  /** Entries per category (categories with none are left out). */
  counts(filter?: { job?: string; runId?: string }): Promise<Partial<Record<ErrorCategory, number>>>;
}

/** Dependencies of the Redis dead-letter store. */
export interface DeadLetterStoreDeps {
  redis: Redis;
  /** Key prefix, e.g. `rowbridge`, or `{rowbridge}` on Redis Cluster. */
  prefix: string;
  /** Clock for default createdAt values. @defaultValue Date.now */
  now?: () => number;
  /**
   * Entries older than this are removed, a bounded slice at each `add`, so a store that
   * nobody purges stays bounded. @defaultValue 90 days (ROWBRIDGE_DLQ_RETENTION_DAYS)
   */
  retentionMs?: number;
}

/** The default retention of dead letters. */
export const DEFAULT_DLQ_RETENTION_MS = 90 * 86_400_000;

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 1000;

export function createDeadLetterStore(deps: DeadLetterStoreDeps): DeadLetterStore {
  const { redis } = deps;
  const index = createDeadLetterIndex(redis, deps.prefix);
  const { base, entriesKey, parse, scan } = index;
  const writes = createDeadLetterWrites(index, {
    now: deps.now ?? Date.now,
    retentionMs: deps.retentionMs ?? DEFAULT_DLQ_RETENTION_MS,
  });

  return {
    ...writes,
    async list(options = {}) {
      const { limit: requested, cursor, ...filter } = options;
      const limit = Math.min(Math.max(Math.trunc(requested ?? DEFAULT_LIMIT), 1), MAX_LIMIT);
      const after = cursor === undefined ? undefined : decodeCursor(cursor);
      // One entry beyond the page tells whether there is a next page at all.
      const found: Array<{ entry: DeadLetterEntry; position: ScanItem }> = [];
      for await (const page of scan(filter, 'desc', after, Math.max(limit + 1, 100))) {
        found.push(...page);
        if (found.length > limit) break;
      }
      const entries = found.slice(0, limit).map(({ entry }) => entry);
      const last = found[limit - 1];
      if (found.length > limit && last !== undefined) {
        return { entries, next: encodeCursor(last.position) };
      }
      return { entries };
    },

    async get(id) {
      const raw = await redis.hget(entriesKey, id);
      return raw === null ? undefined : parse(id, raw);
    },

    async *iterate(filter = {}) {
      for await (const page of scan(filter, 'asc', undefined, BATCH)) {
        for (const { entry } of page) yield entry;
      }
    },

    async counts(filter = {}) {
      const narrow = [
        filter.job === undefined ? undefined : `${base}job:${filter.job}`,
        filter.runId === undefined ? undefined : `${base}run:${filter.runId}`,
      ].filter((key): key is string => key !== undefined);
      const sizes = await Promise.all(
        ERROR_CATEGORIES.map((category) => {
          const catKey = `${base}cat:${category}`;
          return narrow.length === 0
            ? redis.zcard(catKey)
            : redis.zintercard(narrow.length + 1, [catKey, ...narrow]);
        }),
      );
      const out: Partial<Record<ErrorCategory, number>> = {};
      ERROR_CATEGORIES.forEach((category, i) => {
        const size = sizes[i] ?? 0;
        if (size > 0) out[category] = size;
      });
      return out;
    },
  };
}
