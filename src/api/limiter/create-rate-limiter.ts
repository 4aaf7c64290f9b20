import type { AcquireReply, BudgetReply, BudgetStore } from './budget-store.ts';
import { createMemoryBudgetStore } from './create-memory-budget-store.ts';
import { createRedisBudgetStore } from './create-redis-budget-store.ts';
import { createSlotQueue } from './create-slot-queue.ts';
import { resolveLimiterSettings } from './limiter-options.ts';
import type { RateLimiterOptions } from './limiter-options.ts';

/** Paces requests of one credential: shared rate budget plus in-process concurrency. */
export interface RateLimiter {
  /** Runs fn once this process's concurrency and the shared budget allow. */
  schedule<T>(fn: () => Promise<T>): Promise<T>;
  /** Report a throttled answer (code 51, 90000, or 429 from HTTP): pauses the shared budget (retryAfterMs when given, else the configured backoff) and lowers the shared rate. */
  onThrottled(info: { code: number; retryAfterMs?: number }): void | Promise<void>;
  /** Report a successful (non-throttled) answer: lets the shared rate probe back up. */
  onSuccess(): void;
  /** Current shared rate in requests/second (for metrics and the run report). */
  currentRate(): number;
  /** Stops timers and rejects waiting calls; does NOT quit the injected redis client. */
  stop(): Promise<void>;
}

const QUOTA_CODE = 90000;

/** Resolves after ms, rejects once signal aborts. Global timers (not node:timers/promises) so tests can fake them. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new Error('aborted'));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Creates a limiter; with `redis` the budget is shared by every process using the same `budgetKey`. */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const settings = resolveLimiterSettings(options);
  const now = options.now ?? Date.now;
  const store: BudgetStore = options.redis
    ? createRedisBudgetStore({
        redis: options.redis,
        budgetKey: settings.budgetKey,
        config: settings.budget,
        idleTtlMs: settings.idleTtlMs,
        learnedTtlMs: settings.learnedTtlMs,
      })
    : createMemoryBudgetStore({ config: settings.budget, now });
  const slots = createSlotQueue(settings.maxConcurrent);
  const abort = new AbortController();
  const stoppedMessage = `rate limiter for ${settings.budgetKey} was stopped`;

  let rate = settings.budget.initialRate;
  let stopPromise: Promise<void> | undefined;
  // One poller per process: callers queue for their turn (FIFO) and the poller asks the
  // budget for as many tokens as there are callers waiting, so a busy process pays one
  // Redis round trip per batch of grants, not per request, and never runs maxConcurrent
  // loops hammering Redis for the same token. Only callers holding a slot wait here, so
  // no token is taken that a caller is not about to use.
  const turns: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  let polling = false;
  let poller: Promise<void> | undefined;
  let successInFlight: Promise<void> | undefined;
  let lastSuccessSentMs = Number.NEGATIVE_INFINITY;

  const note = <R extends BudgetReply>(reply: R): R => {
    rate = reply.rate;
    return reply;
  };

  async function poll(): Promise<void> {
    try {
      while (turns.length > 0) {
        if (abort.signal.aborted) throw new Error(stoppedMessage);
        let reply: AcquireReply;
        try {
          reply = note(await store.acquire(turns.length));
        } catch (err) {
          // The budget could not be asked (Redis down): the caller whose turn it was
          // fails, the next ones try again, each failing on its own.
          turns.shift()?.reject(err instanceof Error ? err : new Error(String(err)));
          continue;
        }
        for (const turn of turns.splice(0, reply.granted)) turn.resolve();
        if (reply.granted > 0 || reply.waitMs <= 0) continue;
        // Pollers of different workers aim at the same next token; a few ms of jitter
        // keeps one of them from winning every tie (and starving the others) by timer order.
        const jitterMs = Math.random() * Math.min(4, reply.waitMs * 0.2);
        try {
          await sleep(Math.ceil(reply.waitMs + jitterMs), abort.signal);
        } catch {
          throw new Error(stoppedMessage);
        }
      }
    } finally {
      // Cleared in the same tick as the loop's last look at `turns`, so a caller arriving
      // after it starts a new poller instead of waiting on one that has ended.
      polling = false;
    }
  }

  function takeTurn(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      turns.push({ resolve, reject });
      if (polling) return;
      polling = true;
      // poll() only throws once the limiter is stopped: every caller still waiting fails.
      poller = poll().catch((err: unknown) => {
        const reason = err instanceof Error ? err : new Error(String(err));
        for (const turn of turns.splice(0)) turn.reject(reason);
      });
    });
  }

  return {
    async schedule<T>(fn: () => Promise<T>): Promise<T> {
      if (stopPromise) throw new Error(stoppedMessage);
      // fn runs inside this async function, so it keeps its caller's async context
      // (per-run traffic accounting) without any binding.
      await slots.acquire();
      try {
        await takeTurn();
        return await fn();
      } finally {
        slots.release();
      }
    },

    async onThrottled(info) {
      if (stopPromise) return;
      const retryAfterMs = info.retryAfterMs;
      const pauseMs =
        retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0
          ? retryAfterMs
          : info.code === QUOTA_CODE
            ? settings.backoff90000Ms
            : settings.backoff51Ms;
      note(await store.throttled(pauseMs));
    },

    onSuccess() {
      // The budget raises the rate at most once per increaseIntervalMs anyway; reporting
      // every answer would only add one Redis round trip per request.
      const t = now();
      if (stopPromise || successInFlight || t - lastSuccessSentMs < settings.budget.increaseIntervalMs / 4)
        return;
      lastSuccessSentMs = t;
      successInFlight = store
        .success()
        .then(note)
        .then(
          () => undefined,
          (err: unknown) => options.onError?.(err instanceof Error ? err : new Error(String(err))),
        )
        .finally(() => {
          successInFlight = undefined;
        });
    },

    currentRate: () => rate,

    stop() {
      stopPromise ??= (async () => {
        abort.abort();
        slots.close(new Error(stoppedMessage));
        await poller;
        await successInFlight;
      })();
      return stopPromise;
    },
  };
}
