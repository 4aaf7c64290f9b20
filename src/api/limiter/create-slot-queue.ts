/**
 * The in-process concurrency cap of a limiter: at most `size` holders at once, waiters
 * served first come, first served.
 *
 * This replaced bottleneck on the request path (issue 12). bottleneck's local datastore
 * awaits a `setTimeout(0)` on every internal step and starts queued jobs one after the
 * other, which capped a process at about 440 scheduled calls per second whatever its
 * rate and concurrency settings (bench/client.ts, `limiterOnly`). Pacing was never
 * bottleneck's job here (the budget paces, shared through Redis), so all that was left
 * for it was this counter and a FIFO, which take no timer at all.
 */
export interface SlotQueue {
  /** Resolves once a slot is held; rejects with `reason` when the queue is closed first. */
  acquire(): Promise<void>;
  /** Gives a held slot back, to the oldest waiter when there is one. */
  release(): void;
  /** Rejects every waiter and every later acquire with `reason`; held slots stay held. */
  close(reason: Error): void;
  /** Slots held now. */
  readonly active: number;
  /** Callers waiting for a slot. */
  readonly waiting: number;
}

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

/** Creates a FIFO semaphore of `size` slots. */
export function createSlotQueue(size: number): SlotQueue {
  if (!Number.isInteger(size) || size < 1) {
    throw new RangeError(`slot queue size must be an integer >= 1, got ${String(size)}`);
  }
  let active = 0;
  let closed: Error | undefined;
  // An array with a moving head: shift() on a long queue is O(n) per call.
  let waiters: (Waiter | undefined)[] = [];
  let head = 0;

  return {
    acquire() {
      if (closed !== undefined) return Promise.reject(closed);
      if (active < size && head === waiters.length) {
        active += 1;
        return Promise.resolve();
      }
      return new Promise<void>((resolve, reject) => waiters.push({ resolve, reject }));
    },
    release() {
      if (head < waiters.length) {
        // The slot passes straight to the next waiter: `active` does not change.
        const next = waiters[head]!;
        waiters[head] = undefined;
        head += 1;
        if (head > 1024 && head * 2 > waiters.length) {
          waiters = waiters.slice(head);
          head = 0;
        }
        next.resolve();
        return;
      }
      active = Math.max(0, active - 1);
    },
    close(reason) {
      if (closed !== undefined) return;
      closed = reason;
      const rejected = waiters.slice(head);
      waiters = [];
      head = 0;
      for (const w of rejected) w?.reject(reason);
    },
    get active() {
      return active;
    },
    get waiting() {
      return waiters.length - head;
    },
  };
}
