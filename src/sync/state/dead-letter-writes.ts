/**
 * The dead-letter store's changes: entries added, removed, resolved by the rows that
 * landed, moved, adopted into the row index, corrected, purged and pruned. The changes to
 * entries are Lua scripts of dead-letter-scripts.ts, so the indexes always agree with the
 * entries.
 */
import type { DeadLetterEntry, DeadLetterInput } from './dead-letter-entry.ts';
import { BATCH } from './dead-letter-index.ts';
import type { DeadLetterFilter, DeadLetterIndex } from './dead-letter-index.ts';
import { sanitiseEntry } from './dead-letter-sanitise.ts';
import { DEAD_LETTER_SCRIPTS, runDeadLetterScript } from './dead-letter-scripts.ts';

/** What the dead-letter store changes: the writing half of DeadLetterStore (dead-letter-store.ts). */
export interface DeadLetterWrites {
  /** Adds entries; an id already present is left as it is (idempotent). Resolves to the number newly added. */
  add(entries: DeadLetterInput[]): Promise<number>;
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
  /** Removes entries created before the retention window (at most `max`); resolves to the number removed. */
  prune(max?: number): Promise<number>;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The store's changes, through `index`; entries older than `retentionMs` are pruned at each add. */
export function createDeadLetterWrites(
  index: DeadLetterIndex,
  options: { now: () => number; retentionMs: number },
): DeadLetterWrites {
  const { redis, base, entriesKey, allKey, parse, pickIndex, scan } = index;
  const { now, retentionMs } = options;

  async function remove(ids: string[]): Promise<number> {
    let removed = 0;
    for (const batch of chunks([...new Set(ids)], BATCH)) {
      removed += Number(
        await runDeadLetterScript(redis, DEAD_LETTER_SCRIPTS.remove, [entriesKey, allKey], [base, ...batch]),
      );
    }
    return removed;
  }

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
  };
}
