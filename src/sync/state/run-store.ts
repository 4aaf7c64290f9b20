import type { ErrorCategory } from '../../ground/errors.ts';
import type { RedisClient } from './redis-types.ts';
import { stateKey } from './redis-types.ts';

export type RunStatus = 'queued' | 'running' | 'finalizing' | 'completed' | 'failed' | 'skipped';

export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set(['completed', 'failed', 'skipped']);

/** What happened to one source record. `dead:<category>` when it was dead-lettered. */
export type RowOutcome =
  'pending' | 'created' | 'updated' | 'unchanged' | 'skipped' | 'duplicate' | `dead:${ErrorCategory}`;

/** The run report (issue #4): counts of rows by outcome, requests, and timing. */
export interface RunReport {
  read: number;
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
  deleted: number;
  deadLettered: Partial<Record<ErrorCategory, number>>;
  deadLetteredTotal: number;
  /** Older dead letters of the job whose row landed in this run, removed from the store. */
  resolved: number;
  requests: number;
  throttled: number;
  retries: number;
  batches: number;
  durationMs: number;
}

export interface RunRecord {
  runId: string;
  job: string;
  status: RunStatus;
  mode?: string;
  worksheet?: string;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  /** Why the run failed or was stopped, in one sentence. */
  message?: string;
  /** Incremental cursor the run read up to (saved as the job's cursor when it completes). */
  cursor?: string;
  /** Number of batches the reader produced; set when reading is done. */
  batches?: number;
  read?: number;
  /** Mirror deletes done by the finalizer. */
  deleted?: number;
  /** When the run built its key index (once per run). */
  indexedAt?: string;
  /** Id of the run's job in the runs queue (a scheduled run's differs from its run id). */
  queueJobId?: string;
  /** What started the run: `cli`, `schedule`, `enqueue`, `replay`. */
  trigger?: string;
  /** A backfill range, or the dead letters replayed. */
  range?: string;
  replay?: string;
  /** `full` when the run compares with the worksheet ignoring saved hashes (`run --full`). */
  compare?: 'full';
}

export interface RunStore {
  create(record: Omit<RunRecord, 'createdAt' | 'status'> & { status?: RunStatus }): Promise<RunRecord>;
  get(runId: string): Promise<RunRecord | undefined>;
  update(runId: string, patch: Partial<RunRecord>): Promise<void>;
  /**
   * Marks a run failed with one sentence saying why (the one place runs fail). A push
   * run stays resumable: its row outcomes live on for the row-state TTL and the job names
   * it as the run the next `run JOB` resumes.
   */
  fail(runId: string, message: string): Promise<void>;
  /** Newest first. */
  list(options?: { job?: string; limit?: number }): Promise<RunRecord[]>;
  /**
   * Outcomes of source records by their index; counters move exactly once per change.
   * Resolves to the final outcomes newly recorded (not `pending`, not ones already
   * recorded), by outcome: what live metrics count.
   */
  setOutcomes(runId: string, outcomes: ReadonlyMap<number, RowOutcome>): Promise<Record<string, number>>;
  getOutcomes(runId: string, indexes: readonly number[]): Promise<Map<number, RowOutcome>>;
  /** Forgets outcomes (a create that certainly did not happen is no longer pending). */
  clearOutcomes(runId: string, indexes: readonly number[]): Promise<void>;
  /** A backfill chunk finished reading (set, not added: a chunk read twice counts once). */
  setChunkRead(runId: string, chunk: number, read: number, batches: number): Promise<void>;
  /** Pull runs: rows written to the sink (reported as created). */
  addWritten(runId: string, rows: number): Promise<void>;
  /** Requests, throttled answers and retries made for the run. */
  addTraffic(runId: string, traffic: { requests: number; throttled: number; retries: number }): Promise<void>;
  report(runId: string): Promise<RunReport>;
  /** The hash of the run's report counters, for another store's script to add to atomically. */
  tallyKey(runId: string): string;
  /** Mirror: keys the source had in this run. */
  markSeen(runId: string, keys: readonly string[]): Promise<void>;
  isSeen(runId: string, keys: readonly string[]): Promise<boolean[]>;
  /** One active run per job. Resolves to the run already holding the job, or undefined when acquired. */
  acquireJob(job: string, runId: string): Promise<string | undefined>;
  releaseJob(job: string, runId: string): Promise<void>;
  /** The run holding the job's lock, if any (it may have finished and left it behind). */
  activeRun(job: string): Promise<string | undefined>;
  getCursor(job: string): Promise<string | undefined>;
  setCursor(job: string, cursor: string): Promise<void>;
  /** Drops the per-row bookkeeping of a finished run (the record and report stay). */
  dropRowState(runId: string): Promise<void>;
  /**
   * Keeps a run that did not finish resumable: its row outcomes live on for `ttlSeconds`
   * (so a resumed run skips the rows already written) and the job names it as the run
   * the next `run JOB` resumes.
   */
  keepResumable(job: string, runId: string, ttlSeconds: number): Promise<void>;
  /** The job's run that failed and can be resumed, if any. */
  resumableRun(job: string): Promise<string | undefined>;
  /**
   * The job has no resumable run any more (a run of it completed, or `--fresh` abandoned
   * it): returns the run that was, so its row bookkeeping can be dropped.
   */
  takeResumable(job: string): Promise<string | undefined>;
  /** A failed run is queued again under its own id: its failure fields go. */
  reopen(runId: string): Promise<void>;
}

// Moves each outcome once: a batch retried after a crash re-sets the same outcomes
// without counting them twice. Returns the final outcomes it moved, as flat pairs.
const SET_OUTCOMES = `
local moved = {}
for i = 1, #ARGV, 2 do
  local old = redis.call('HGET', KEYS[1], ARGV[i])
  local new = ARGV[i + 1]
  if old ~= new then
    redis.call('HSET', KEYS[1], ARGV[i], new)
    if old then redis.call('HINCRBY', KEYS[2], old, -1) end
    redis.call('HINCRBY', KEYS[2], new, 1)
    if new ~= 'pending' then moved[new] = (moved[new] or 0) + 1 end
  end
end
local out = {}
for outcome, n in pairs(moved) do
  out[#out + 1] = outcome
  out[#out + 1] = n
end
return out`;

const CLEAR_OUTCOMES = `
for i = 1, #ARGV do
  local old = redis.call('HGET', KEYS[1], ARGV[i])
  if old then
    redis.call('HDEL', KEYS[1], ARGV[i])
    redis.call('HINCRBY', KEYS[2], old, -1)
  end
end
return 1`;

/** Options of {@link createRunStore}. */
export interface RunStoreOptions {
  redis: RedisClient;
  /** Prefix of rowbridge's keys. */
  prefix: string;
  /** Run records, reports and the runs index keep this long. @defaultValue 14 days */
  retentionSeconds?: number;
  /** Row outcomes of a failed or abandoned run keep this long. @defaultValue 7 days */
  rowStateTtlSeconds?: number;
  /** Sees the final outcomes each `setOutcomes` newly recorded (live metrics). */
  onRecorded?: (moved: Readonly<Record<string, number>>) => void;
}

export function createRunStore(deps: RunStoreOptions): RunStore {
  const { redis, prefix } = deps;
  const RETENTION_SECONDS = deps.retentionSeconds ?? 14 * 24 * 3600;
  const rowStateTtl = deps.rowStateTtlSeconds ?? 7 * 24 * 3600;
  const runKey = (runId: string) => stateKey(prefix, 'run', runId);
  const outcomesKey = (runId: string) => stateKey(prefix, 'run', runId, 'outcomes');
  const countsKey = (runId: string) => stateKey(prefix, 'run', runId, 'counts');
  const seenKey = (runId: string) => stateKey(prefix, 'run', runId, 'seen');
  const runsKey = stateKey(prefix, 'runs');
  const jobKey = (job: string) => stateKey(prefix, 'job', job);

  function parse(hash: Record<string, string>): RunRecord | undefined {
    if (hash.runId === undefined) return undefined;
    const out: Record<string, unknown> = {};
    let chunkRead = 0;
    let chunkBatches = 0;
    let chunks = 0;
    for (const [k, v] of Object.entries(hash)) {
      if (k.startsWith('chunk:')) {
        const [read, batches] = v.split('/').map(Number);
        chunkRead += read ?? 0;
        chunkBatches += batches ?? 0;
        chunks += 1;
      } else out[k] = v;
    }
    for (const n of ['batches', 'read', 'deleted'] as const)
      if (hash[n] !== undefined) out[n] = Number(hash[n]);
    if (chunks > 0) {
      out.read = chunkRead;
      out.batches = chunkBatches;
    }
    return out as unknown as RunRecord;
  }

  function flatten(patch: Partial<RunRecord>): string[] {
    const args: string[] = [];
    for (const [k, v] of Object.entries(patch)) if (v !== undefined) args.push(k, String(v));
    return args;
  }

  const store: RunStore = {
    async create(init) {
      const record: RunRecord = { status: 'queued', ...init, createdAt: new Date().toISOString() };
      await redis
        .multi()
        .hset(runKey(record.runId), ...flatten(record))
        .expire(runKey(record.runId), RETENTION_SECONDS)
        .zadd(runsKey, Date.now(), record.runId)
        // The index keeps what the records keep: older entries name expired records.
        .zremrangebyscore(runsKey, '-inf', Date.now() - RETENTION_SECONDS * 1000)
        .exec();
      return record;
    },
    async get(runId) {
      return parse(await redis.hgetall(runKey(runId)));
    },
    async update(runId, patch) {
      const args = flatten(patch);
      if (args.length > 0) await redis.hset(runKey(runId), ...args);
    },
    async fail(runId, message) {
      await store.update(runId, { status: 'failed', message, finishedAt: new Date().toISOString() });
      const record = await store.get(runId);
      if (record !== undefined && record.mode !== 'pull')
        await store.keepResumable(record.job, runId, rowStateTtl);
    },
    async list(options = {}) {
      const ids = await redis.zrevrange(runsKey, 0, (options.job ? 500 : (options.limit ?? 20)) - 1);
      const records = await Promise.all(ids.map((id) => store.get(id)));
      return records
        .filter(
          (r): r is RunRecord => r !== undefined && (options.job === undefined || r.job === options.job),
        )
        .slice(0, options.limit ?? 20);
    },
    async setOutcomes(runId, outcomes) {
      if (outcomes.size === 0) return {};
      const args: string[] = [];
      for (const [index, outcome] of outcomes) args.push(String(index), outcome);
      // Each write renews the expiry: a run abandoned without a word (its process and
      // every resume gone) does not keep its row bookkeeping forever.
      const results = await redis
        .multi()
        .eval(SET_OUTCOMES, 2, outcomesKey(runId), countsKey(runId), ...args)
        .expire(outcomesKey(runId), rowStateTtl)
        .expire(countsKey(runId), Math.max(rowStateTtl, RETENTION_SECONDS))
        .exec();
      const [err, flat] = results?.[0] ?? [];
      if (err) throw err;
      const moved: Record<string, number> = {};
      const pairs = Array.isArray(flat) ? (flat as Array<string | number>) : [];
      for (let i = 0; i + 1 < pairs.length; i += 2) moved[String(pairs[i])] = Number(pairs[i + 1]);
      if (pairs.length > 0) deps.onRecorded?.(moved);
      return moved;
    },
    tallyKey: countsKey,
    async getOutcomes(runId, indexes) {
      const out = new Map<number, RowOutcome>();
      if (indexes.length === 0) return out;
      const values = await redis.hmget(outcomesKey(runId), ...indexes.map(String));
      indexes.forEach((index, i) => {
        const v = values[i];
        if (v != null) out.set(index, v as RowOutcome);
      });
      return out;
    },
    async clearOutcomes(runId, indexes) {
      if (indexes.length === 0) return;
      await redis.eval(CLEAR_OUTCOMES, 2, outcomesKey(runId), countsKey(runId), ...indexes.map(String));
    },
    async setChunkRead(runId, chunk, read, batches) {
      await redis.hset(runKey(runId), `chunk:${chunk}`, `${read}/${batches}`);
    },
    async addWritten(runId, rows) {
      await redis.hincrby(countsKey(runId), 'created', rows);
    },
    async addTraffic(runId, traffic) {
      await redis
        .multi()
        .hincrby(countsKey(runId), 'requests', traffic.requests)
        .hincrby(countsKey(runId), 'throttled', traffic.throttled)
        .hincrby(countsKey(runId), 'retries', traffic.retries)
        .exec();
    },
    async report(runId) {
      const [counts, record] = await Promise.all([redis.hgetall(countsKey(runId)), store.get(runId)]);
      const n = (name: string) => Number(counts[name] ?? 0);
      const deadLettered: Partial<Record<ErrorCategory, number>> = {};
      let deadLetteredTotal = 0;
      for (const [name, value] of Object.entries(counts)) {
        if (name.startsWith('dead:') && Number(value) > 0) {
          deadLettered[name.slice(5) as ErrorCategory] = Number(value);
          deadLetteredTotal += Number(value);
        }
      }
      const started = record?.startedAt ? Date.parse(record.startedAt) : undefined;
      const finished = record?.finishedAt ? Date.parse(record.finishedAt) : Date.now();
      return {
        read: record?.read ?? 0,
        created: n('created'),
        updated: n('updated'),
        unchanged: n('unchanged'),
        skipped: n('skipped') + n('duplicate'),
        deleted: record?.deleted ?? 0,
        deadLettered,
        deadLetteredTotal,
        resolved: n('resolved'),
        requests: n('requests'),
        throttled: n('throttled'),
        retries: n('retries'),
        batches: record?.batches ?? 0,
        durationMs: started === undefined ? 0 : finished - started,
      };
    },
    async markSeen(runId, keys) {
      if (keys.length === 0) return;
      await redis
        .multi()
        .sadd(seenKey(runId), ...keys)
        .expire(seenKey(runId), RETENTION_SECONDS)
        .exec();
    },
    async isSeen(runId, keys) {
      if (keys.length === 0) return [];
      const flags = await redis.smismember(seenKey(runId), ...keys);
      return flags.map((f) => f === 1);
    },
    async acquireJob(job, runId) {
      const key = stateKey(prefix, 'job', job, 'active');
      for (let attempt = 0; attempt < 2; attempt += 1) {
        if ((await redis.set(key, runId, 'NX')) === 'OK') return undefined;
        const holder = await redis.get(key);
        if (holder === null || holder === runId) {
          await redis.set(key, runId);
          return undefined;
        }
        const held = await store.get(holder);
        // A holder that finished (or whose record expired) left the lock behind: take it over.
        if (held !== undefined && !TERMINAL_STATUSES.has(held.status)) return holder;
        await redis.del(key);
      }
      return undefined;
    },
    async releaseJob(job, runId) {
      const key = stateKey(prefix, 'job', job, 'active');
      if ((await redis.get(key)) === runId) await redis.del(key);
    },
    async activeRun(job) {
      return (await redis.get(stateKey(prefix, 'job', job, 'active'))) ?? undefined;
    },
    async getCursor(job) {
      return (await redis.hget(jobKey(job), 'cursor')) ?? undefined;
    },
    async setCursor(job, cursor) {
      await redis.hset(jobKey(job), 'cursor', cursor);
    },
    async keepResumable(job, runId, ttlSeconds) {
      await redis
        .multi()
        .hset(jobKey(job), 'resumable', runId)
        .expire(outcomesKey(runId), ttlSeconds)
        .expire(seenKey(runId), ttlSeconds)
        .expire(countsKey(runId), Math.max(ttlSeconds, RETENTION_SECONDS))
        .exec();
    },
    async resumableRun(job) {
      return (await redis.hget(jobKey(job), 'resumable')) ?? undefined;
    },
    async takeResumable(job) {
      const [[, runId]] = (await redis
        .multi()
        .hget(jobKey(job), 'resumable')
        .hdel(jobKey(job), 'resumable')
        .exec()) as [[unknown, string | null]];
      return runId ?? undefined;
    },
    async reopen(runId) {
      await redis
        .multi()
        .hdel(runKey(runId), 'message', 'finishedAt')
        .hset(runKey(runId), 'status', 'queued')
        .persist(outcomesKey(runId))
        .persist(seenKey(runId))
        .exec();
    },
    async dropRowState(runId) {
      await redis
        .multi()
        .del(outcomesKey(runId))
        .del(seenKey(runId))
        .expire(countsKey(runId), RETENTION_SECONDS)
        .exec();
    },
  };
  return store;
}
