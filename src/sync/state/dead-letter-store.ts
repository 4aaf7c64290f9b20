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
import { sanitiseEntry } from './dead-letter-sanitise.ts';
import type { DeadLetterEntry, DeadLetterInput } from './dead-letter-entry.ts';
import { DEAD_LETTER_SCRIPTS, runDeadLetterScript } from './dead-letter-scripts.ts';
import { decodeCursor, encodeCursor, scanIndex } from './dead-letter-scan.ts';
import type { ScanItem, ScanPosition } from './dead-letter-scan.ts';

/** Narrows a listing; every given criterion must match. */
export interface DeadLetterFilter {
  category?: ErrorCategory;
  job?: string;
  runId?: string;
}

/** Which dead letters a replay re-maps and re-sends: the ids given, or all matching the filter. */
export interface DeadLetterSelection {
  ids?: string[];
  filter?: DeadLetterFilter;
}

export interface DeadLetterStore {
  /** Adds entries; an id already present is left as it is (idempotent). Resolves to the number newly added. */
  add(entries: DeadLetterInput[]): Promise<number>;
  /** Newest first, paged by an opaque cursor. `limit` defaults to 50 and is capped at 1000. */
  list(
    filter?: DeadLetterFilter & { limit?: number; cursor?: string },
  ): Promise<{ entries: DeadLetterEntry[]; next?: string }>;
  get(id: string): Promise<DeadLetterEntry | undefined>;
  /** All entries matching (for replay), oldest first: an async iterator so 100k entries stream. Removing yielded entries meanwhile is safe. */
  iterate(filter?: DeadLetterFilter): AsyncGenerator<DeadLetterEntry>;
  /** Resolves to the number of entries that existed and were removed. */
  remove(ids: string[]): Promise<number>;
  /**
   * Gives entries a corrected source record (a fixed export), keeping their ids, runs and
   * reasons; entries no longer in the store are skipped. Resolves to the number replaced.
   */
  replaceSource(fixes: ReadonlyArray<{ id: string; data: Record<string, unknown> }>): Promise<number>;
  /**
   * Rows of `runId` landed: the job's entries about them (by rowIdentity of dead-letter-entry.ts, entries
   * of `runId` itself excepted) or the entries named leave the store, and their number is
   * added to `resolved` in the hash `tallyKey` (the run's report counters) in the same
   * atomic step, so a retried batch never counts one twice. Resolves to the number removed.
   */
  resolve(options: {
    job: string;
    runId: string;
    tallyKey: string;
    identities?: readonly string[];
    ids?: readonly string[];
  }): Promise<number>;
  /**
   * The entry `from` replaces the entry `to` and takes its id (a replayed row failed
   * again: its entry keeps the id a person knows), keeping `to`'s fixedAt. Nothing
   * happens when `from` is gone.
   */
  move(from: string, to: string): Promise<boolean>;
  /**
   * Entries stored before the row index existed get the key given (when they have none)
   * and their place in the index, so that their row landing resolves them too. Entries
   * changed meanwhile are skipped. Resolves to the number newly indexed.
   */
  adopt(entries: ReadonlyArray<{ entry: DeadLetterEntry; key: string | undefined }>): Promise<number>;
  /** Removes every entry matching (all of them without a filter); resolves to the number removed. */
  purge(filter?: DeadLetterFilter): Promise<number>;
  /** Entries per category (categories with none are left out). */
  counts(filter?: { job?: string; runId?: string }): Promise<Partial<Record<ErrorCategory, number>>>;
  /** Removes entries created before the retention window (at most `max`); resolves to the number removed. */
  prune(max?: number): Promise<number>;
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
/** Entries per script call: big enough to amortise round trips, small enough not to block Redis. */
const BATCH = 500;

function matches(entry: DeadLetterEntry, filter: DeadLetterFilter): boolean {
  return (
    (filter.category === undefined || entry.category === filter.category) &&
    (filter.job === undefined || entry.job === filter.job) &&
    (filter.runId === undefined || entry.runId === filter.runId)
  );
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export function createDeadLetterStore(deps: DeadLetterStoreDeps): DeadLetterStore {
  const { redis } = deps;
  const now = deps.now ?? Date.now;
  const base = `${deps.prefix}:dlq:`;
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

  async function remove(ids: string[]): Promise<number> {
    let removed = 0;
    for (const batch of chunks([...new Set(ids)], BATCH)) {
      removed += Number(
        await runDeadLetterScript(redis, DEAD_LETTER_SCRIPTS.remove, [entriesKey, allKey], [base, ...batch]),
      );
    }
    return removed;
  }

  const retentionMs = deps.retentionMs ?? DEFAULT_DLQ_RETENTION_MS;

  async function prune(max = BATCH): Promise<number> {
    const expired = await redis.zrangebyscore(allKey, '-inf', `(${now() - retentionMs}`, 'LIMIT', 0, max);
    return expired.length === 0 ? 0 : remove(expired);
  }

  return {
    prune,
    async resolve({ job, runId, tallyKey, identities = [], ids = [] }) {
      let resolved = 0;
      for (const [mode, items] of [
        ['rows', identities],
        ['ids', ids],
      ] as const) {
        for (const batch of chunks([...new Set(items)], BATCH)) {
          resolved += Number(
            await runDeadLetterScript(
              redis,
              DEAD_LETTER_SCRIPTS.resolve,
              [entriesKey, allKey, tallyKey],
              [base, job, runId, mode, ...batch],
            ),
          );
        }
      }
      return resolved;
    },
    async adopt(items) {
      let indexed = 0;
      for (const batch of chunks([...items], BATCH)) {
        const args = batch.flatMap(({ entry, key }) => {
          const read = JSON.stringify(entry);
          const keyed = entry.key === undefined && key !== undefined ? { ...entry, key } : entry;
          return [entry.id, read, keyed === entry ? read : JSON.stringify(keyed)];
        });
        indexed += Number(
          await runDeadLetterScript(redis, DEAD_LETTER_SCRIPTS.adopt, [entriesKey, allKey], [base, ...args]),
        );
      }
      return indexed;
    },
    async move(from, to) {
      const [raw, older] = await redis.hmget(entriesKey, from, to);
      if (raw == null) return false;
      const entry: DeadLetterEntry = { ...parse(from, raw), id: to };
      // A record a person fixed by file was what the replay wrote: it stays the one to replay.
      const fixedAt = older == null ? undefined : parse(to, older).fixedAt;
      if (fixedAt !== undefined) entry.fixedAt = fixedAt;
      const moved = await runDeadLetterScript(
        redis,
        DEAD_LETTER_SCRIPTS.move,
        [entriesKey, allKey],
        [base, from, to, JSON.stringify(entry), Date.parse(entry.createdAt)],
      );
      return Number(moved) === 1;
    },
    async replaceSource(fixes) {
      let replaced = 0;
      for (const batch of chunks([...fixes], BATCH)) {
        const current = await redis.hmget(entriesKey, ...batch.map((f) => f.id));
        const args: string[] = [];
        batch.forEach((fix, i) => {
          const raw = current[i];
          if (raw == null) return;
          const entry = parse(fix.id, raw);
          const fixedAt = new Date(now()).toISOString();
          const fixed = { ...entry, source: { ...entry.source, data: fix.data }, fixedAt };
          args.push(fix.id, JSON.stringify(fixed));
        });
        if (args.length > 0)
          replaced += Number(
            await runDeadLetterScript(redis, DEAD_LETTER_SCRIPTS.replace, [entriesKey], args),
          );
      }
      return replaced;
    },
    async add(inputs) {
      const prepared = inputs.map((input) => sanitiseEntry(input, now));
      let added = 0;
      for (const batch of chunks(prepared, BATCH)) {
        const args = batch.flatMap(({ entry, score }) => [entry.id, JSON.stringify(entry), score]);
        added += Number(
          await runDeadLetterScript(redis, DEAD_LETTER_SCRIPTS.add, [entriesKey, allKey], [base, ...args]),
        );
      }
      // Retention is enforced where the store grows, a bounded slice at a time.
      await prune();
      return added;
    },

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

    remove,

    async purge(filter = {}) {
      const { key, exact } = await pickIndex(filter);
      let purged = 0;
      if (exact) {
        // Everything in this index goes: take from its head until it is empty.
        for (;;) {
          const ids = await redis.zrange(key, '0', String(BATCH - 1));
          if (ids.length === 0) return purged;
          purged += await remove(ids);
          // Repairs an index member without an entry, which would otherwise loop forever.
          await redis.zrem(key, ...ids);
        }
      }
      for await (const page of scan(filter, 'asc', undefined, BATCH)) {
        purged += await remove(page.map(({ entry }) => entry.id));
      }
      return purged;
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
