/**
 * The state of a two-way job in Redis, under the job's state prefix: the links (table
 * key ↔ row id) with each field's last synced hash, the intents a run records before it
 * creates, the conflicts waiting for a person, and the deletes waiting for approval.
 * Every key is plain (no expiry), so it survives a restart of a Redis with AOF. A link
 * and its row index are written in one MULTI, so neither is ever seen without the other.
 */
import type { RedisClient } from '../state/redis-types.ts';
import { stateKey } from '../state/redis-types.ts';

/** Version of the stored shapes below; a store written in another refuses to be read. */
export const TWO_WAY_STATE_FORMAT = 1;

/** One linked record: its worksheet row, and per field (target) the last synced hash. */
export interface Link {
  /** Table key (keyColumn) as text. */
  key: string;
  rowId: string;
  base: Record<string, string>;
  /**
   * The last synced value itself (comparison form) of each `conflict: manual` field: the
   * only fields a conflict waits on a person for, who needs to see it (`conflicts show`).
   * Every other field keeps its hash only.
   */
  last?: Record<string, string>;
  /** Hashes a run decided to write and may not have written (cleared once it has). */
  pending?: Record<string, string>;
  /** `deletes: none`: the side whose record is gone; the other is left alone from then on. */
  gone?: 'source' | 'worksheet';
}

/** A create recorded before it is made: a record created and not linked is matched by key, with this base. */
export interface Intent {
  /** The side the record is created on. */
  side: 'source' | 'worksheet';
  /** The record it copies: a table key or a row id. */
  origin: string;
  matchKey: string;
  base: Record<string, string>;
  last?: Record<string, string>;
}

/** A record a person decides on: fields both sides changed (manual), or records sharing a key. */
export interface Conflict {
  id: string;
  kind: 'fields' | 'ambiguous';
  /** The match key value, as text. */
  matchKey: string;
  key?: string;
  rowId?: string;
  /** `base`: hash of the last synced value; `last`: that value, kept for manual fields (Link.last). */
  fields?: Array<{ field: string; worksheet: string; source: string; base?: string; last?: string }>;
  /** ambiguous: the records holding the key on each side. */
  records?: { source: string[]; worksheet: string[] };
  worksheetUpdatedAt?: string;
  sourceUpdatedAt?: string;
  at: string;
  /** Set by `conflicts resolve`: applied at the next run. */
  take?: { source: true } | { worksheet: true } | { value: string };
}

/** A delete held back (more than options.deleteThreshold of a side in one run). */
export interface PendingDelete {
  /** Side the record is deleted on. */
  side: 'source' | 'worksheet';
  key: string;
  rowId: string;
  at: string;
  approved?: boolean;
}

/** The two-way state of one job. */
export interface LinkStore {
  /** Refuses a store of another format; stamps a new store unless `readOnly` (a CLI that only looks). */
  checkFormat(options?: { readOnly?: boolean }): Promise<void>;
  links(): Promise<Map<string, Link>>;
  /**
   * Every link's row id, and whole the links holding a pending write or a gone side, read
   * a page at a time (HSCAN): what a run reading changes needs of the links it will not
   * decide on, without holding every link whole.
   */
  linkIndex(): Promise<LinkIndex>;
  /** The links of `keys` (a key without one is left out). */
  getLinks(keys: readonly string[]): Promise<Map<string, Link>>;
  saveLinks(links: readonly Link[]): Promise<void>;
  dropLinks(links: ReadonlyArray<Pick<Link, 'key' | 'rowId'>>): Promise<void>;
  intents(): Promise<Map<string, Intent>>;
  saveIntents(intents: readonly Intent[]): Promise<void>;
  dropIntents(intents: ReadonlyArray<Pick<Intent, 'side' | 'origin'>>): Promise<void>;
  conflicts(): Promise<Map<string, Conflict>>;
  saveConflicts(conflicts: readonly Conflict[]): Promise<void>;
  dropConflicts(ids: readonly string[]): Promise<void>;
  pendingDeletes(): Promise<Map<string, PendingDelete>>;
  savePendingDeletes(deletes: readonly PendingDelete[]): Promise<void>;
  dropPendingDeletes(ids: readonly string[]): Promise<void>;
}

/**
 * Links in brief: every link's table key and row id (`keys[i]` is linked to `rowIds[i]`;
 * a link may appear twice, as HSCAN may give an entry twice), and whole the links a run
 * must always look at.
 */
export interface LinkIndex {
  keys: string[];
  rowIds: string[];
  /** Links with `pending` or `gone` set. */
  special: Map<string, Link>;
}

/** Id of a pending delete: one per record and side. */
export function pendingDeleteId(d: Pick<PendingDelete, 'side' | 'key' | 'rowId'>): string {
  return d.side === 'source' ? `source:${d.key}` : `worksheet:${d.rowId}`;
}

const intentId = (i: Pick<Intent, 'side' | 'origin'>) => `${i.side}:${i.origin}`;

/** The state of `job` under `prefix` (the runtime's state prefix). */
export function createLinkStore(deps: { redis: RedisClient; prefix: string; job: string }): LinkStore {
  const { redis } = deps;
  const key = (part: string) => stateKey(deps.prefix, 'twoway', deps.job, part);
  const links = key('links');
  const rows = key('rows');

  async function readAll<T>(hashKey: string): Promise<Map<string, T>> {
    const all = await redis.hgetall(hashKey);
    return new Map(Object.entries(all).map(([id, json]) => [id, JSON.parse(json) as T]));
  }

  async function write(hashKey: string, entries: Array<[string, unknown]>): Promise<void> {
    for (let i = 0; i < entries.length; i += 1000) {
      const part = entries.slice(i, i + 1000);
      await redis.hset(hashKey, Object.fromEntries(part.map(([id, v]) => [id, JSON.stringify(v)])));
    }
  }

  async function drop(hashKey: string, ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += 1000) await redis.hdel(hashKey, ...ids.slice(i, i + 1000));
  }

  return {
    async checkFormat(options = {}) {
      const meta = key('meta');
      const format = await redis.hget(meta, 'format');
      if (format === null) {
        if (options.readOnly !== true) await redis.hset(meta, 'format', String(TWO_WAY_STATE_FORMAT));
        return;
      }
      if (format !== String(TWO_WAY_STATE_FORMAT))
        throw new Error(
          `two-way state of job ${deps.job} is in format ${format}; this rowbridge reads format ${TWO_WAY_STATE_FORMAT}`,
        );
    },
    async links() {
      const all = await redis.hgetall(links);
      return new Map(
        Object.entries(all).map(([k, json]) => [k, { key: k, ...(JSON.parse(json) as Omit<Link, 'key'>) }]),
      );
    },
    async linkIndex() {
      const index: LinkIndex = { keys: [], rowIds: [], special: new Map() };
      let cursor = '0';
      do {
        const [next, flat] = await redis.hscan(links, cursor, 'COUNT', 1000);
        cursor = next;
        for (let i = 0; i < flat.length; i += 2) {
          const link = { key: flat[i]!, ...(JSON.parse(flat[i + 1]!) as Omit<Link, 'key'>) };
          index.keys.push(link.key);
          index.rowIds.push(link.rowId);
          if (link.pending !== undefined || link.gone !== undefined) index.special.set(link.key, link);
        }
      } while (cursor !== '0');
      return index;
    },
    async getLinks(keys) {
      const out = new Map<string, Link>();
      for (let i = 0; i < keys.length; i += 1000) {
        const part = keys.slice(i, i + 1000);
        if (part.length === 0) continue;
        const values = await redis.hmget(links, ...part);
        values.forEach((json, j) => {
          if (json !== null) out.set(part[j]!, { key: part[j]!, ...(JSON.parse(json) as Omit<Link, 'key'>) });
        });
      }
      return out;
    },
    async saveLinks(list) {
      for (let i = 0; i < list.length; i += 500) {
        const multi = redis.multi();
        for (const { key: k, ...rest } of list.slice(i, i + 500)) {
          multi.hset(links, k, JSON.stringify(rest));
          multi.hset(rows, rest.rowId, k);
        }
        await multi.exec();
      }
    },
    async dropLinks(list) {
      for (let i = 0; i < list.length; i += 500) {
        const multi = redis.multi();
        for (const link of list.slice(i, i + 500)) {
          multi.hdel(links, link.key);
          multi.hdel(rows, link.rowId);
        }
        await multi.exec();
      }
    },
    intents: () => readAll<Intent>(key('intents')),
    saveIntents: (list) =>
      write(
        key('intents'),
        list.map((i) => [intentId(i), i]),
      ),
    dropIntents: (list) => drop(key('intents'), list.map(intentId)),
    conflicts: () => readAll<Conflict>(key('conflicts')),
    saveConflicts: (list) =>
      write(
        key('conflicts'),
        list.map((c) => [c.id, c]),
      ),
    dropConflicts: (ids) => drop(key('conflicts'), ids),
    pendingDeletes: () => readAll<PendingDelete>(key('deletes')),
    savePendingDeletes: (list) =>
      write(
        key('deletes'),
        list.map((d) => [pendingDeleteId(d), d]),
      ),
    dropPendingDeletes: (ids) => drop(key('deletes'), ids),
  };
}
