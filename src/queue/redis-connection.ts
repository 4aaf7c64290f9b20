import { Cluster, Redis } from 'ioredis';
import { ConfigError } from '../ground/errors.ts';

/** A standalone Redis or a Redis Cluster client, as {@link createRedisConnection} makes it. */
export type RedisConnection = Redis | Cluster;

/** Options of {@link createRedisConnection}. */
export interface RedisConnectionOptions {
  /**
   * A BullMQ connection: its blocking commands need `maxRetriesPerRequest: null`, or a
   * worker gives up waiting for jobs while Redis restarts. Other connections fail a
   * command after 3 retries so a CLI command reports an outage instead of hanging.
   */
  bullmq: boolean;
  /**
   * The key prefix the connection is used with (ROWBRIDGE_QUEUE_PREFIX). On a cluster it
   * must hold a hash tag such as `{rowbridge}`: checked here, so a bad prefix fails at
   * start rather than with CROSSSLOT errors in the middle of a run.
   */
  keyPrefix?: string;
  /** Connect on the first command or `connect()` rather than at once. @defaultValue false */
  lazyConnect?: boolean;
  /** Longest wait for a TCP connection. @defaultValue ioredis' 10 000 ms */
  connectTimeoutMs?: number;
  /** Give up after the first failed connection instead of reconnecting (for a probe). @defaultValue false */
  once?: boolean;
}

/** One node of a cluster URL. */
export interface RedisNode {
  host: string;
  port: number;
}

/** Where a REDIS_URL points, parsed; the password stays in here and is never printed. */
export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: RedisNode[]; tls: boolean; username?: string; password?: string };

const SCHEMES = 'redis://, rediss://, redis+cluster:// or rediss+cluster://';

/**
 * Reads a REDIS_URL. Besides `redis://` and `rediss://` it accepts the cluster form
 * `redis+cluster://[user:password@]host1:port1,host2:port2` (`rediss+cluster://` for
 * TLS): any reachable nodes of the cluster; the client discovers the rest. Errors name
 * REDIS_URL and the accepted forms, never the URL itself (it may hold a password).
 */
export function parseRedisUrl(url: string): RedisTarget {
  const scheme = /^([a-z+]+):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'redis' || scheme === 'rediss') return { kind: 'single', url };
  if (scheme !== 'redis+cluster' && scheme !== 'rediss+cluster') {
    throw new ConfigError(
      `REDIS_URL must start with ${SCHEMES}${scheme === undefined ? '' : `, got ${scheme}://`}`,
    );
  }
  const rest = url.slice(scheme.length + 3);
  const at = rest.lastIndexOf('@');
  const auth = at === -1 ? undefined : rest.slice(0, at);
  const [hostList = '', pathPart = ''] = rest.slice(at + 1).split(/\/(.*)/s, 2);
  if (hostList.trim() === '')
    throw new ConfigError(
      'REDIS_URL (cluster form) lists no nodes: use redis+cluster://host1:port1,host2:port2',
    );
  const nodes = hostList.split(',').map((entry, i) => parseNode(entry.trim(), i));
  const target: RedisTarget = { kind: 'cluster', nodes, tls: scheme === 'rediss+cluster' };
  if (auth !== undefined) {
    const colon = auth.indexOf(':');
    const username = decodeAuth(colon === -1 ? '' : auth.slice(0, colon));
    const password = decodeAuth(colon === -1 ? auth : auth.slice(colon + 1));
    if (username !== '') target.username = username;
    if (password !== '') target.password = password;
  }
  // Redis Cluster has one database and the client has no URL options: accepting either
  // silently would connect differently from what was asked.
  if (pathPart !== '' && pathPart !== '0') {
    throw new ConfigError(
      'REDIS_URL (cluster form) takes no database or options after the node list: Redis Cluster only has database 0',
    );
  }
  return target;
}

/**
 * Whether every key starting with `prefix` hashes to the same slot: Redis hashes only the
 * part between the first `{` and the next `}` when that part is not empty.
 */
export function hasHashTag(prefix: string): boolean {
  const open = prefix.indexOf('{');
  return open !== -1 && prefix.indexOf('}', open + 1) > open + 1;
}

function decodeAuth(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new ConfigError(
      'REDIS_URL: the user or password has a "%" that is not URL encoding; write it as %25',
    );
  }
}

function parseNode(entry: string, index: number): RedisNode {
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/i.exec(entry);
  const port = Number(match?.[2] ?? '6379');
  if (match === null || port < 1 || port > 65535) {
    throw new ConfigError(`REDIS_URL (cluster form): node ${index + 1} "${entry}" is not host:port`);
  }
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

/**
 * A connection for REDIS_URL: an ioredis `Redis` for `redis://`/`rediss://`, an ioredis
 * `Cluster` for the `redis+cluster://` form. On a cluster, every key rowbridge uses must
 * share one hash slot: set ROWBRIDGE_QUEUE_PREFIX to a hash tag such as `{rowbridge}`.
 */
export function createRedisConnection(url: string, options: RedisConnectionOptions): RedisConnection {
  const target = parseRedisUrl(url);
  if (target.kind === 'cluster' && options.keyPrefix !== undefined && !hasHashTag(options.keyPrefix)) {
    throw new ConfigError(
      `ROWBRIDGE_QUEUE_PREFIX "${options.keyPrefix}" has no hash tag, but REDIS_URL is a cluster: ` +
        'BullMQ and rowbridge run scripts over several keys, which Redis Cluster allows only within one slot. ' +
        `Use a prefix such as "{${options.keyPrefix.replace(/[{}]/g, '') || 'rowbridge'}}".`,
    );
  }
  const common = {
    maxRetriesPerRequest: options.bullmq ? null : 3,
    ...(options.connectTimeoutMs === undefined ? {} : { connectTimeout: options.connectTimeoutMs }),
  };
  const lazy = { lazyConnect: options.lazyConnect === true };
  const giveUp = () => null;
  if (target.kind === 'single') {
    return new Redis(target.url, {
      ...common,
      ...lazy,
      ...(options.once === true ? { retryStrategy: giveUp } : {}),
    });
  }
  return new Cluster(target.nodes, {
    ...lazy,
    ...(options.once === true ? { clusterRetryStrategy: giveUp } : {}),
    redisOptions: {
      ...common,
      ...(target.username === undefined ? {} : { username: target.username }),
      ...(target.password === undefined ? {} : { password: target.password }),
      ...(target.tls ? { tls: {} } : {}),
    },
  });
}
