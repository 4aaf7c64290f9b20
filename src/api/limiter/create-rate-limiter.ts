import type { BudgetReply, BudgetStore } from './budget-store.ts';
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
      })
    : createMemoryBudgetStore({ config: settings.budget, now });
  const slots = createSlotQueue(settings.maxConcurrent);
  const abort = new AbortController();
  const stoppedMessage = `rate limiter for ${settings.budgetKey} was stopped`;

  let rate = settings.budget.initialRate;
  let stopPromise: Promise<void> | undefined;
  // One poller per process: jobs take their turn for a token in FIFO order instead of
  // maxConcurrent loops hammering Redis for the same token.
  let acquireTail: Promise<void> = Promise.resolve();
  let successInFlight: Promise<void> | undefined;
  let lastSuccessSentMs = Number.NEGATIVE_INFINITY;

  const note = (reply: BudgetReply): BudgetReply => {
    rate = reply.rate;
    return reply;
  };

  async function waitForToken(): Promise<void> {
    for (;;) {
      if (abort.signal.aborted) throw new Error(stoppedMessage);
      const { waitMs } = note(await store.acquire());
      if (waitMs <= 0) return;
      // Pollers of different workers aim at the same next token; a few ms of jitter keeps
      // one of them from winning every tie (and starving the others) by timer order.
      const jitterMs = Math.random() * Math.min(4, waitMs * 0.2);
      try {
        await sleep(Math.ceil(waitMs + jitterMs), abort.signal);
      } catch {
        throw new Error(stoppedMessage);
      }
    }
  }

  function takeTurn(): Promise<void> {
    const turn = acquireTail.then(waitForToken);
    acquireTail = turn.catch(() => undefined);
    return turn;
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
        await acquireTail;
        await successInFlight;
      })();
      return stopPromise;
    },
  };
}
