import { RowbridgeError } from '../../ground/errors.ts';
import type { ErrorCategory } from '../../ground/errors.ts';
import type { RedisClient } from './redis-types.ts';
import { stateKey } from './redis-types.ts';

/**
 * The version of what rowbridge keeps in Redis under one prefix: run records, outcome
 * ledgers, key indexes, dead letters, and the batch jobs' rows (`BATCH_ROWS_FORMAT` of
 * ../batch-job-rows.ts). One version, no readers of others: a change to any of them that
 * another version could not read raises it.
 */
export const STATE_VERSION = 1;

/** Redis holds the state of another version of rowbridge than this process's. */
export class StateVersionError extends RowbridgeError {
  override name = 'StateVersionError';
  override readonly code: string = 'ROWBRIDGE_STATE_VERSION';
  // A deployment matter: no retry of this process reads another version's state.
  override readonly category: ErrorCategory = 'config';
}

/**
 * Stamps `prefix`'s state with {@link STATE_VERSION} when nothing is stamped yet (a new
 * Redis or prefix), else checks the stamp: another version's state throws
 * {@link StateVersionError} before this process reads or writes any of it.
 */
export async function checkStateVersion(redis: RedisClient, prefix: string): Promise<void> {
  const key = stateKey(prefix, 'version');
  const ours = String(STATE_VERSION);
  if ((await redis.set(key, ours, 'NX')) === 'OK') return;
  const held = await redis.get(key);
  if (held === ours || held === null) return;
  throw new StateVersionError(
    `this Redis holds rowbridge state version ${held} (key ${key}); this worker is version ${ours}: ` +
      'run workers of one version on one Redis, or give this one a Redis or ROWBRIDGE_QUEUE_PREFIX of its own',
  );
}
