import type { RunKeys } from './run-keys.ts';

/** `unmet`: every row was written, but the job's `expect:` did not hold (docs/expectations.md). */
export type RunStatus = 'queued' | 'running' | 'finalizing' | 'completed' | 'unmet' | 'failed' | 'skipped';

export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set(['completed', 'unmet', 'failed', 'skipped']);

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
  /** A failed run: its error's category and code (`ROWBRIDGE_SCHEMA_DRIFT`...), for notifications. */
  category?: string;
  errorCode?: string;
  /** Incremental cursor the run read up to (saved as the job's cursor when it completes). */
  cursor?: string;
  /** Number of batches the reader produced; set when reading is done. */
  batches?: number;
  read?: number;
  /** Mirror deletes done by the finalizer. */
  deleted?: number;
  /** When the run decided how to match keys, and scanned if it had to (once per run). */
  indexedAt?: string;
  /** `scan`: the run read every worksheet row's key; `index`: it trusted the key index and looked up what it did not know. */
  keyMatch?: 'scan' | 'index';
  /** Why (sync/write/key-scan.ts KeyMatchReason), and the same in one sentence. */
  keyMatchReason?: string;
  keyMatchDetail?: string;
  /** What the run is doing while it is not writing: "matching keys: page 3 of 5, ..."; '' once done. */
  phase?: string;
  /** Id of the run's job in the runs queue (a scheduled run's differs from its run id). */
  queueJobId?: string;
  /** The BullMQ prefix of the queues the run lives in when not the shared ones (`run JOB` works its runs in its own). */
  queues?: string;
  /** What started the run: `cli`, `schedule`, `enqueue`, `replay`. */
  trigger?: string;
  /** A backfill range, or the dead letters replayed. */
  range?: string;
  replay?: string;
  /** `full` when the run compares with the worksheet ignoring saved hashes (`run --full`). */
  compare?: 'full';
  /** Why an incremental pull read from the beginning instead of its saved cursor. */
  startedOver?: string;
}

/** The records of runs and the index that lists them, newest first. */
export interface RunRecords {
  create(record: Omit<RunRecord, 'createdAt' | 'status'> & { status?: RunStatus }): Promise<RunRecord>;
  get(runId: string): Promise<RunRecord | undefined>;
  update(runId: string, patch: Partial<RunRecord>): Promise<void>;
  /** Newest first. */
  list(options?: { job?: string; limit?: number }): Promise<RunRecord[]>;
  /** A backfill chunk finished reading (set, not added: a chunk read twice counts once). */
  setChunkRead(runId: string, chunk: number, read: number, batches: number): Promise<void>;
  /** A failed run is queued again under its own id: its failure fields go, its row state stays. */
  reopen(runId: string): Promise<void>;
}

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

export function createRunRecords(keys: RunKeys): RunRecords {
  const { redis } = keys;
  const records: RunRecords = {
    async create(init) {
      const record: RunRecord = { status: 'queued', ...init, createdAt: new Date().toISOString() };
      await redis
        .multi()
        .hset(keys.run(record.runId), ...flatten(record))
        .expire(keys.run(record.runId), keys.retentionSeconds)
        .zadd(keys.runs, Date.now(), record.runId)
        // The index keeps what the records keep: older entries name expired records.
        .zremrangebyscore(keys.runs, '-inf', Date.now() - keys.retentionSeconds * 1000)
        .exec();
      return record;
    },
    async get(runId) {
      return parse(await redis.hgetall(keys.run(runId)));
    },
    async update(runId, patch) {
      const args = flatten(patch);
      if (args.length > 0) await redis.hset(keys.run(runId), ...args);
    },
    async list(options = {}) {
      const ids = await redis.zrevrange(keys.runs, 0, (options.job ? 500 : (options.limit ?? 20)) - 1);
      const found = await Promise.all(ids.map((id) => records.get(id)));
      return found
        .filter(
          (r): r is RunRecord => r !== undefined && (options.job === undefined || r.job === options.job),
        )
        .slice(0, options.limit ?? 20);
    },
    async setChunkRead(runId, chunk, read, batches) {
      await redis.hset(keys.run(runId), `chunk:${chunk}`, `${read}/${batches}`);
    },
    async reopen(runId) {
      await redis
        .multi()
        .hdel(keys.run(runId), 'message', 'finishedAt', 'category', 'errorCode')
        .hset(keys.run(runId), 'status', 'queued')
        .persist(keys.ledger(runId))
        .persist(keys.seen(runId))
        .exec();
    },
  };
  return records;
}
