/**
 * A job's limit on a third-party source (`source.rateLimit` of an http or SQL source):
 * requests or queries started per second and in flight at once, across every worker
 * reading the job's chunks. Bottleneck does the counting; with a Redis connection its
 * clustering keeps one count in Redis for all processes, without one (validate, preview)
 * the limit holds within this process.
 *
 * Bottleneck's IORedisConnection is handed a duplicate of the connection it is given,
 * never that connection itself: it defines its Lua commands on the client it gets and
 * quits it on disconnect, and the runtime's state connection is shared by everything
 * else. The duplicate carries the state prefix as ioredis `keyPrefix`, so Bottleneck's
 * keys live under the queue prefix (cleaned with it, in its cluster slot) and expire
 * after `idleMs` without use.
 */
import Bottleneck from 'bottleneck';
import type { Cluster, Redis } from 'ioredis';

/** `source.rateLimit`: what the third-party system allows this job, across all workers. */
export interface SourceRateLimit {
  /** Requests (http) or queries (SQL) started per second, at most; unset: no pace. */
  perSecond?: number;
  /** Requests or queries in flight at once, at most; unset: no cap. */
  concurrent?: number;
}

/** One job's source limit in this process. */
export interface SourceGate {
  /** Resolves once the limit allows one more request; call the returned function when it is over. */
  take(): Promise<() => void>;
}

/** The source limits of a process, one shared limiter per job and source. */
export interface SourceLimits {
  /** The gate of `job`'s `sourceType` source; the same one for every read in this process. */
  gate(job: string, sourceType: string, limit: SourceRateLimit): SourceGate;
  /** Disconnects the limiters and the duplicate connection. */
  close(): Promise<void>;
}

/** Options of {@link createSourceLimits}. */
export interface SourceLimitsOptions {
  /** Duplicated (never used itself) for Bottleneck's clustering; absent: per-process limits. */
  redis?: Redis | Cluster | undefined;
  /** Prefix of the keys and channels, e.g. the runtime's state prefix. */
  prefix: string;
  /** Bottleneck's keys expire after this long unused. @defaultValue 600000 */
  idleMs?: number;
}

/**
 * A slot is given back after this long even if its holder never said so (a worker that
 * died mid-page): one lost slot then blocks the job's other workers for this long at most.
 */
const SLOT_EXPIRATION_MS = 5 * 60_000;

function bottleneckSettings(limit: SourceRateLimit) {
  return {
    maxConcurrent: limit.concurrent ?? null,
    minTime: limit.perSecond === undefined ? 0 : Math.ceil(1000 / limit.perSecond),
  };
}

/** A gate over one Bottleneck: a slot is a scheduled job that lasts until it is released. */
function gateOf(limiter: Bottleneck): SourceGate {
  return {
    take: () =>
      new Promise<() => void>((resolve, reject) => {
        limiter
          .schedule(
            { expiration: SLOT_EXPIRATION_MS },
            () => new Promise<void>((release) => resolve(release)),
          )
          // Rejections after the slot was handed over (its expiration) concern nobody.
          .catch((err: unknown) => reject(err instanceof Error ? err : new Error(String(err))));
      }),
  };
}

/** A per-process gate for one read, when no shared limits were passed in. */
export function createLocalGate(limit: SourceRateLimit): { gate: SourceGate; close: () => Promise<void> } {
  const limiter = new Bottleneck(bottleneckSettings(limit));
  return { gate: gateOf(limiter), close: () => limiter.stop({ dropWaitingJobs: true }) };
}

function duplicate(redis: Redis | Cluster, keyPrefix: string): Redis | Cluster {
  return 'startupNodes' in redis ? redis.duplicate(undefined, { keyPrefix }) : redis.duplicate({ keyPrefix });
}

/** Creates the source limits of a process (the runtime makes one). */
export function createSourceLimits(options: SourceLimitsOptions): SourceLimits {
  const limiters = new Map<string, { limiter: Bottleneck; settings: string }>();
  let connection: Bottleneck.IORedisConnection | undefined;

  function shared(): Bottleneck.IORedisConnection | undefined {
    if (options.redis === undefined) return undefined;
    connection ??= new Bottleneck.IORedisConnection({
      client: duplicate(options.redis, `${options.prefix}:`),
    });
    return connection;
  }

  return {
    gate(job, sourceType, limit) {
      // The prefix is in the id too: Bottleneck's pub/sub channels are named by id alone.
      const id = `source-limit:${options.prefix}:${job}:${sourceType}`;
      const settings = bottleneckSettings(limit);
      const key = JSON.stringify(settings);
      const known = limiters.get(id);
      if (known !== undefined) {
        // An edited job spec: one limiter per id and connection (the channel names it).
        if (known.settings !== key) {
          known.limiter.updateSettings(settings);
          known.settings = key;
        }
        return gateOf(known.limiter);
      }
      const conn = shared();
      const limiter = new Bottleneck({
        ...settings,
        id,
        ...(conn === undefined
          ? {}
          : { datastore: 'ioredis', connection: conn, timeout: options.idleMs ?? 10 * 60_000 }),
      });
      // Errors of the background heartbeat; a take() still fails on its own.
      limiter.on('error', () => undefined);
      limiters.set(id, { limiter, settings: key });
      return gateOf(limiter);
    },
    async close() {
      for (const { limiter } of limiters.values()) {
        // With a shared connection this only unsubscribes (and returns no promise).
        await Promise.resolve(limiter.disconnect(false)).catch(() => undefined);
      }
      limiters.clear();
      if (connection !== undefined) await connection.disconnect(true).catch(() => undefined);
      connection = undefined;
    },
  };
}

/**
 * `fn` taking its turn under a source's limit, one slot per call: the job's shared gate
 * when there is one, else a gate of this read (ended by `close`), else `fn` as it is.
 */
export function limitCalls<A extends unknown[], R>(
  limit: SourceRateLimit | undefined,
  shared: SourceGate | undefined,
  fn: (...args: A) => Promise<R>,
): { call: (...args: A) => Promise<R>; close: () => Promise<void> } {
  const local = shared === undefined && limit !== undefined ? createLocalGate(limit) : undefined;
  const gate = shared ?? local?.gate;
  if (gate === undefined) return { call: fn, close: () => Promise.resolve() };
  return {
    async call(...args) {
      const release = await gate.take();
      try {
        return await fn(...args);
      } finally {
        release();
      }
    },
    close: async () => {
      await local?.close();
    },
  };
}
