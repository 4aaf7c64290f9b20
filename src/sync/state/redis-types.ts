import type { Cluster, Redis } from 'ioredis';

/** A standalone Redis or a Redis Cluster client: the state stores work on both. */
export type RedisClient = Redis | Cluster;

/**
 * Key of rowbridge state under a prefix. A prefix in braces (`{rowbridge}`) is a Redis
 * Cluster hash tag: every key of one prefix lands in one slot, so MULTI, RENAME and
 * scripts over several keys stay legal on a cluster.
 */
export function stateKey(prefix: string, ...parts: Array<string | number>): string {
  return [prefix, ...parts].join(':');
}
