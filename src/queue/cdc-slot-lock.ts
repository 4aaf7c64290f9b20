/**
 * Keeping a change-capture slot's lock in Redis: one consumer per slot across all workers.
 * The holder renews it while it streams, so a dead holder's lock expires and another worker
 * takes over; a worker that finds it taken waits its turn. Apart from the stream loop so the
 * loop reads as the stream and this file as the exactly-one-consumer rule.
 */
import type { CdcLock } from '../sync/cdc/cdc-state.ts';

/**
 * Renews `lock` every third of its TTL until the returned function is called; `onLost` runs
 * when a renewal finds another holder (a failed renewal is retried on the next beat).
 */
export function keepSlotLock(lock: CdcLock, ttlMs: number, onLost: () => void): () => void {
  const renew = setInterval(() => {
    lock.renew().then(
      (held) => {
        if (!held) onLost();
      },
      () => undefined,
    );
  }, ttlMs / 3);
  return () => clearInterval(renew);
}

/** Follow mode: waits a fifth of the lock's TTL (at least 500 ms) or until `signal` aborts. */
export async function waitForSlotLockTurn(ttlMs: number, signal: AbortSignal): Promise<void> {
  await new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.max(500, ttlMs / 5));
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve(undefined);
      },
      { once: true },
    );
  });
}
