/**
 * Hints of webhook calls, kept in Redis until a hint run has written their rows. A hint
 * is a token in the job's pending set: `i:<source id>` for a row to read again from the
 * source, `r:<delivery>:<n>` for a record the call carried (its JSON beside it). A hint
 * run takes pending tokens into a set of its own and drops that set only once its rows
 * landed (take-then-ack): a run that dies is retried with the same run id and finds the
 * tokens it took. One scheduling flag per job holds the run id that will take the next
 * tokens, so a burst of calls makes one queued run, not one per call.
 */
import type { RedisClient } from '../sync/state/redis-types.ts';
import { stateKey } from '../sync/state/redis-types.ts';
import { ACCEPT, RECENT, runScript, TAKE } from './hook-inbox-scripts.ts';
import { newRunId } from './run-id.ts';

/** A call seen before under this delivery id is answered as a duplicate for this long. */
const DELIVERY_TTL_SECONDS = 24 * 3600;
/** A flag whose run was lost (a process died between the flag and the queue) lapses. */
const SCHEDULED_TTL_MS = 60_000;

/** What one accepted call adds: tokens, with the record's JSON for `r:` tokens. */
export interface HookHint {
  tokens: Array<{ token: string; data?: string }>;
}

/** One call as the job page shows it. */
export interface HookCall {
  at: string;
  deliveryId: string;
  /** 202 queued, 200 duplicate, 4xx refused. */
  status: number;
  queued: number;
  reason?: string;
}

/** Answer of {@link HookInbox.accept}. */
export type Accepted =
  | { duplicate: true }
  | {
      duplicate: false;
      queued: number;
      /** Set when this call raised the scheduling flag: queue a hint run with this id. */
      schedule?: string;
    };

/** Answer of {@link HookInbox.take}. */
export interface Taken {
  /** `wait`: a burst is still arriving and fewer than a batch are pending; `empty`: nothing to do. */
  state: 'ready' | 'wait' | 'empty';
  /** Set when tokens were left pending and nobody will take them: queue a hint run with this id. */
  next?: string;
}

/** The hint state of every job, in Redis. */
export interface HookInbox {
  accept(job: string, deliveryId: string | undefined, hint: HookHint, call: HookCall): Promise<Accepted>;
  /** Unschedules a flag whose run could not be queued, so that the next call tries again. */
  unschedule(job: string, runId: string): Promise<void>;
  take(job: string, runId: string, options: TakeOptions): Promise<Taken>;
  /** The tokens the run took, sorted (a re-read numbers rows as the first read did), with record JSON. */
  taken(job: string, runId: string): Promise<Array<{ token: string; data?: string; acceptedAt?: number }>>;
  /** The rows landed: forgets the run's tokens; returns the milliseconds each waited since its call. */
  ack(job: string, runId: string, now?: number): Promise<number[]>;
  /** The waits `ack` measured for a run, once (hint-to-landed latency for the metrics). */
  takeWaits(job: string, runId: string): Promise<number[]>;
  /** Remembers a refused call for the job page. */
  refused(job: string, call: HookCall): Promise<void>;
  recent(job: string): Promise<HookCall[]>;
  /** Source id → target key, learned as hint runs read rows (a mirror deletes by it when a row is gone). */
  learnKeys(job: string, keys: ReadonlyMap<string, string>): Promise<void>;
  knownKeys(job: string, ids: readonly string[]): Promise<Map<string, string>>;
  forgetKeys(job: string, ids: readonly string[]): Promise<void>;
  /** Ids a hint run asked for that the source no longer has. */
  setGone(job: string, runId: string, ids: readonly string[]): Promise<void>;
  gone(job: string, runId: string): Promise<string[]>;
}

/** Options of {@link HookInbox.take}. */
export interface TakeOptions {
  batchSize: number;
  debounceMs: number;
  /** Past this age the oldest pending hint is taken even while a burst goes on. */
  maxWaitMs: number;
  /** The run id to raise the flag with when tokens stay pending. */
  nextRunId: string;
  ttlSeconds: number;
  now?: number;
}

export function createHookInbox(deps: { redis: RedisClient; prefix: string }): HookInbox {
  const { redis } = deps;
  const key = (job: string, ...parts: string[]) => stateKey(deps.prefix, 'hooks', job, ...parts);
  const takenKey = (job: string, runId: string) => key(job, 'taken', runId);

  return {
    async accept(job, deliveryId, hint, call) {
      const args: string[] = [];
      for (const t of hint.tokens) args.push(t.token, t.data ?? '');
      // One round trip, a duplicate's entry on the recent calls included: the call is
      // answered right after it.
      const [queued, schedule] = (await runScript(
        redis,
        ACCEPT,
        [
          key(job, 'delivery', deliveryId ?? '-'),
          key(job, 'pending'),
          key(job, 'records'),
          key(job, 'at'),
          key(job, 'last'),
          key(job, 'scheduled'),
          key(job, 'recent'),
          key(job, 'first'),
        ],
        [
          String(Date.now()),
          deliveryId ?? '',
          String(DELIVERY_TTL_SECONDS),
          newRunId(job),
          String(SCHEDULED_TTL_MS),
          JSON.stringify(call),
          JSON.stringify({ ...call, status: 200, reason: 'duplicate' }),
          String(hint.tokens.length),
          ...args,
        ],
      )) as [number, string];
      if (queued === -1) return { duplicate: true };
      return { duplicate: false, queued, ...(schedule === '' ? {} : { schedule }) };
    },
    async unschedule(job, runId) {
      const flag = key(job, 'scheduled');
      if ((await redis.get(flag)) === runId) await redis.del(flag);
    },
    async take(job, runId, options) {
      const now = options.now ?? Date.now();
      const [state, next] = (await runScript(
        redis,
        TAKE,
        [
          takenKey(job, runId),
          key(job, 'pending'),
          key(job, 'last'),
          key(job, 'scheduled'),
          key(job, 'first'),
        ],
        [
          String(now),
          String(options.debounceMs),
          String(options.batchSize),
          runId,
          options.nextRunId,
          String(SCHEDULED_TTL_MS),
          String(options.ttlSeconds),
          String(options.maxWaitMs),
        ],
      )) as [Taken['state'], string];
      return { state, ...(next === '' ? {} : { next }) };
    },
    async taken(job, runId) {
      const tokens = (await redis.smembers(takenKey(job, runId))).sort();
      if (tokens.length === 0) return [];
      const records = tokens.filter((t) => t.startsWith('r:'));
      const data = records.length === 0 ? [] : await redis.hmget(key(job, 'records'), ...records);
      const byToken = new Map(records.map((t, i) => [t, data[i] ?? undefined]));
      const at = await redis.hmget(key(job, 'at'), ...tokens);
      return tokens.map((token, i) => {
        const json = byToken.get(token);
        const accepted = at[i];
        return {
          token,
          ...(json === undefined || json === null ? {} : { data: json }),
          ...(accepted === undefined || accepted === null ? {} : { acceptedAt: Number(accepted) }),
        };
      });
    },
    async ack(job, runId, now = Date.now()) {
      const tokens = await redis.smembers(takenKey(job, runId));
      if (tokens.length === 0) return [];
      const at = await redis.hmget(key(job, 'at'), ...tokens);
      const multi = redis.multi();
      // A token hinted again while its run wrote is pending anew: its time stays for that run.
      const pending = await redis.smismember(key(job, 'pending'), ...tokens);
      const done = tokens.filter((_, i) => pending[i] !== 1);
      if (done.length > 0) multi.hdel(key(job, 'at'), ...done);
      const records = done.filter((t) => t.startsWith('r:'));
      if (records.length > 0) multi.hdel(key(job, 'records'), ...records);
      multi.del(takenKey(job, runId), key(job, 'gone', runId));
      const waits = at.filter((v): v is string => v !== null).map((v) => Math.max(0, now - Number(v)));
      // For the metrics of whichever process sees the run finish (worker.ts).
      if (waits.length > 0)
        multi.set(key(job, 'waits', runId), JSON.stringify(waits), 'EX', DELIVERY_TTL_SECONDS);
      await multi.exec();
      return waits;
    },
    async takeWaits(job, runId) {
      const text = await redis.getdel(key(job, 'waits', runId));
      return text === null ? [] : (JSON.parse(text) as number[]);
    },
    async refused(job, call) {
      await redis
        .multi()
        .lpush(key(job, 'recent'), JSON.stringify(call))
        .ltrim(key(job, 'recent'), 0, RECENT - 1)
        .exec();
    },
    async recent(job) {
      const list = await redis.lrange(key(job, 'recent'), 0, RECENT - 1);
      return list.map((text) => JSON.parse(text) as HookCall);
    },
    async learnKeys(job, keys) {
      if (keys.size === 0) return;
      await redis.hset(key(job, 'keys'), Object.fromEntries(keys));
    },
    async knownKeys(job, ids) {
      if (ids.length === 0) return new Map();
      const values = await redis.hmget(key(job, 'keys'), ...ids);
      const out = new Map<string, string>();
      ids.forEach((id, i) => {
        const v = values[i];
        if (typeof v === 'string') out.set(id, v);
      });
      return out;
    },
    async forgetKeys(job, ids) {
      if (ids.length > 0) await redis.hdel(key(job, 'keys'), ...ids);
    },
    async setGone(job, runId, ids) {
      const gone = key(job, 'gone', runId);
      const multi = redis.multi().del(gone);
      if (ids.length > 0) multi.sadd(gone, ...ids).expire(gone, DELIVERY_TTL_SECONDS * 7);
      await multi.exec();
    },
    async gone(job, runId) {
      return redis.smembers(key(job, 'gone', runId));
    },
  };
}
