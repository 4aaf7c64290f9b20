/**
 * What a change-capture job keeps in Redis. The position is a pair saved together: the
 * slot position acknowledged and the ordinal the next change gets. Streaming starts at
 * exactly that position, so a change replayed after a crash gets the ordinal it had, and
 * the run's outcome ledger (by ordinal) writes it nothing twice.
 */
import type { RedisClient } from '../state/redis-types.ts';
import { stateKey } from '../state/redis-types.ts';

/** Where the stream of one job stands. */
export interface CdcPosition {
  /** The run whose ledger holds the outcomes of this epoch's changes. */
  runId: string;
  /** Slot position acknowledged: every change before it is written or dead-lettered. */
  lsn: string;
  /** Ordinal of the next change in the run. */
  nextIndex: number;
  /** The slot this position belongs to (a slot made anew starts a new epoch). */
  slot: string;
}

/** What `cdc status`, `status`, the job page and /metrics show of a stream. */
export interface CdcStatus {
  /** `snapshot`, `streaming`, `waiting` (another worker holds the slot) or `failed`. */
  state: string;
  holder?: string;
  confirmedLsn?: string;
  /** WAL written since the slot's confirmed position (`pg_current_wal_lsn()` minus it). */
  lagBytes?: number;
  /** Age of the oldest change not yet acknowledged when the status was saved. */
  lagSeconds?: number;
  /**
   * Commit time (ISO) of the oldest change read and not yet acknowledged: a reader adds the
   * time since the status was saved, so a stream stuck on a batch shows its lag growing.
   */
  pendingSince?: string;
  /** Changes written since the stream started (this epoch). */
  changes?: number;
  error?: string;
  updatedAt: string;
}

/** A lock held for `ttlMs`, renewed by its holder. */
export interface CdcLock {
  /** Takes the lock when free (or already ours). */
  acquire(): Promise<boolean>;
  /** Extends it; false when it was lost (expired and taken by another). */
  renew(): Promise<boolean>;
  release(): Promise<void>;
}

const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

export interface CdcState {
  position(job: string): Promise<CdcPosition | undefined>;
  savePosition(job: string, position: CdcPosition): Promise<void>;
  /** Forgets the position: the next start takes a snapshot (`--resnapshot`). */
  forget(job: string): Promise<void>;
  status(job: string): Promise<CdcStatus | undefined>;
  setStatus(job: string, status: Omit<CdcStatus, 'updatedAt'>): Promise<void>;
  /** The status of every stream that saved one within the last hour, by job. */
  statuses(): Promise<Map<string, CdcStatus>>;
  /** Source id → target key, for deletes whose old row carries only the primary key. */
  keysOf(job: string, ids: readonly string[]): Promise<Map<string, string>>;
  learnKeys(job: string, keys: ReadonlyMap<string, string>): Promise<void>;
  forgetKeys(job: string, ids: readonly string[]): Promise<void>;
  /** Forgets every id → key (the table was truncated). */
  clearKeys(job: string): Promise<void>;
  /** The last TRUNCATE applied (its run and ordinal): a replayed one is not applied again. */
  truncated(job: string): Promise<{ runId: string; index: number } | undefined>;
  markTruncated(job: string, runId: string, index: number): Promise<void>;
  /** The one consumer of a slot across all workers. */
  lock(slot: string, holder: string, ttlMs: number): CdcLock;
  /** Who holds the slot's lock, if anyone. */
  lockHolder(slot: string): Promise<string | undefined>;
}

export function createCdcState(deps: { redis: RedisClient; prefix: string }): CdcState {
  const { redis, prefix } = deps;
  const jobKey = (job: string) => stateKey(prefix, 'cdc', job);
  const statusKey = (job: string) => stateKey(prefix, 'cdc', job, 'status');
  const keysKey = (job: string) => stateKey(prefix, 'cdc', job, 'keys');
  const lockKey = (slot: string) => stateKey(prefix, 'cdc', 'slot', slot, 'lock');
  // The jobs that saved a status: every process (status, dashboard, /metrics) lists streams here.
  const streamsKey = stateKey(prefix, 'cdc', 'streams');
  return {
    async position(job) {
      const h = await redis.hgetall(jobKey(job));
      if (h.runId === undefined || h.lsn === undefined || h.slot === undefined) return undefined;
      return { runId: h.runId, lsn: h.lsn, nextIndex: Number(h.nextIndex ?? 0), slot: h.slot };
    },
    async savePosition(job, p) {
      await redis.hset(
        jobKey(job),
        'runId',
        p.runId,
        'lsn',
        p.lsn,
        'nextIndex',
        String(p.nextIndex),
        'slot',
        p.slot,
      );
    },
    async forget(job) {
      await redis.del(jobKey(job), keysKey(job));
    },
    async status(job) {
      const raw = await redis.get(statusKey(job));
      return raw === null ? undefined : (JSON.parse(raw) as CdcStatus);
    },
    async setStatus(job, status) {
      // Expires: a stream nobody runs any more does not show as streaming for ever.
      await redis
        .multi()
        .set(statusKey(job), JSON.stringify({ ...status, updatedAt: new Date().toISOString() }), 'EX', 3600)
        .sadd(streamsKey, job)
        .exec();
    },
    async statuses() {
      const jobs = (await redis.smembers(streamsKey)).sort();
      const out = new Map<string, CdcStatus>();
      if (jobs.length === 0) return out;
      const raw = await redis.mget(...jobs.map(statusKey));
      const gone: string[] = [];
      jobs.forEach((job, i) => {
        const text = raw[i];
        if (text === null || text === undefined) gone.push(job);
        else out.set(job, JSON.parse(text) as CdcStatus);
      });
      if (gone.length > 0) await redis.srem(streamsKey, ...gone);
      return out;
    },
    async keysOf(job, ids) {
      const out = new Map<string, string>();
      if (ids.length === 0) return out;
      const values = await redis.hmget(keysKey(job), ...ids);
      ids.forEach((id, i) => {
        const v = values[i];
        if (v !== null && v !== undefined) out.set(id, v);
      });
      return out;
    },
    async learnKeys(job, keys) {
      if (keys.size === 0) return;
      await redis.hset(keysKey(job), Object.fromEntries(keys));
    },
    async forgetKeys(job, ids) {
      if (ids.length > 0) await redis.hdel(keysKey(job), ...ids);
    },
    async clearKeys(job) {
      await redis.del(keysKey(job));
    },
    async truncated(job) {
      const raw = await redis.hget(jobKey(job), 'truncated');
      const at = raw?.lastIndexOf(':') ?? -1;
      if (raw === null || raw === undefined || at < 0) return undefined;
      return { runId: raw.slice(0, at), index: Number(raw.slice(at + 1)) };
    },
    async markTruncated(job, runId, index) {
      await redis.hset(jobKey(job), 'truncated', `${runId}:${index}`);
    },
    lock(slot, holder, ttlMs) {
      const key = lockKey(slot);
      return {
        async acquire() {
          if ((await redis.set(key, holder, 'PX', ttlMs, 'NX')) === 'OK') return true;
          return (await redis.eval(RENEW, 1, key, holder, String(ttlMs))) === 1;
        },
        async renew() {
          return (await redis.eval(RENEW, 1, key, holder, String(ttlMs))) === 1;
        },
        async release() {
          await redis.eval(RELEASE, 1, key, holder);
        },
      };
    },
    async lockHolder(slot) {
      return (await redis.get(lockKey(slot))) ?? undefined;
    },
  };
}
