/**
 * The `throttled` event (issue 27 §1): a run the platform has answered only "throttled"
 * (51 or 90000) for longer than ROWBRIDGE_NOTIFY_THROTTLED_MS queues the event, once per
 * run. The streak is kept in Redis per run (the time of its first throttled answer), so
 * the batches of one run on several workers make one streak; any other answer ends it.
 *
 * A throttled answer costs two Redis commands; a successful one costs none unless this
 * process saw the streak, or once a second (another worker's streak may be the one to
 * end). Answers arrive synchronously from the client's event hook, so the Redis work is
 * chained here and never delays a request; its errors are logged, never thrown: a
 * notification never fails a run.
 */
import type { NotificationPayload } from '../sync/notify/notification-payload.ts';
import type { Runtime, ThrottledRunRef } from './runtime-types.ts';

/** Sees every platform answer made for a run. */
export interface ThrottleWatch {
  answer(run: ThrottledRunRef, throttled: boolean): void;
  /** Resolves once the Redis work queued so far is done (before the runtime closes). */
  settled(): Promise<void>;
}

/** How often a process that saw no streak still ends one on success (another worker's). */
const CLEAR_EVERY_MS = 1_000;
/** Runs followed at once per process; the oldest is forgotten (its state is in Redis). */
const RUNS_KEPT = 64;
const DAY_MS = 86_400_000;

/**
 * The notify queue's module, loaded at the first answer a run sees: it brings the job-spec
 * schemas and the channel formats, which an idle worker does not need (bench/import.ts
 * measures the idle worker's memory).
 */
const notifyQueue = () => import('./notify-queue.ts');

/** A watch over the runtime's Redis, queueing through the runtime's notify queue. */
export function createThrottleWatch(runtime: () => Runtime): ThrottleWatch {
  const local = new Map<string, { inStreak: boolean; clearedAt: number }>();
  let chain: Promise<void> = Promise.resolve();

  function enqueue(work: (rt: Runtime) => Promise<void>): void {
    chain = chain.then(async () => {
      const rt = runtime();
      try {
        await work(rt);
      } catch (err) {
        rt.logger.warn({ err: { message: (err as Error).message } }, 'throttled event');
      }
    });
  }

  async function throttled(rt: Runtime, run: ThrottledRunRef, now: number): Promise<void> {
    const { channelsOf, notifyKey, OWN_DELIVERY_HOLD_MS, queueEvent } = await notifyQueue();
    const streakKey = notifyKey(rt, 'throttling', run.runId);
    await rt.redis.set(streakKey, String(now), 'PX', DAY_MS, 'NX');
    const since = Number((await rt.redis.get(streakKey)) ?? now);
    const limitMs = rt.settings.notifyThrottledMs;
    if (now - since <= limitMs) return;
    const sent = await rt.redis.set(notifyKey(rt, 'throttled', run.runId), '1', 'PX', 7 * DAY_MS, 'NX');
    if (sent === null) return;
    const channels = (await channelsOf(rt, run.job)).filter((c) => c.channel.on.includes('throttled'));
    const payload: NotificationPayload = {
      event: 'throttled',
      job: run.job,
      runId: run.runId,
      at: new Date(now).toISOString(),
      status: 'running',
      error: {
        category: 'throttled',
        message: `the platform has answered only "throttled" (51/90000) since ${new Date(since).toISOString()} (${Math.round((now - since) / 1000)} s; ROWBRIDGE_NOTIFY_THROTTLED_MS ${Math.round(limitMs / 1000)} s)`,
      },
    };
    rt.logger.warn({ job: run.job, runId: run.runId, sinceMs: now - since }, 'the platform keeps throttling');
    // A `run JOB` delivers its run's notifications itself (notify-run.ts): the same hold.
    const own = rt.queuePrefix !== rt.settings.queuePrefix;
    await queueEvent(
      rt,
      run.job,
      [{ event: 'throttled', channels }],
      () => payload,
      own ? OWN_DELIVERY_HOLD_MS : 0,
    );
  }

  return {
    answer(run, isThrottled) {
      const now = Date.now();
      let state = local.get(run.runId);
      if (state === undefined) {
        state = { inStreak: false, clearedAt: 0 };
        local.set(run.runId, state);
        if (local.size > RUNS_KEPT) local.delete(local.keys().next().value!);
      }
      if (isThrottled) {
        state.inStreak = true;
        enqueue((rt) => throttled(rt, run, now));
        return;
      }
      if (!state.inStreak && now - state.clearedAt < CLEAR_EVERY_MS) return;
      state.inStreak = false;
      state.clearedAt = now;
      enqueue(async (rt) => {
        const { notifyKey } = await notifyQueue();
        await rt.redis.del(notifyKey(rt, 'throttling', run.runId));
      });
    },
    settled: () => chain,
  };
}
