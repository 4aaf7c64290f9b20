import { DelayedError } from 'bullmq';
import type { Job } from 'bullmq';
import { ApiError, classifyError } from '../ground/errors.ts';
import type { ErrorCategory } from '../ground/errors.ts';
import { stopsRun } from '../sync/write-batch.ts';

/** What to do with a batch whose writing threw (category policy of issue #4). */
export type BatchFailureAction =
  | { kind: 'stop-run'; message: string; category: ErrorCategory }
  | { kind: 'delay'; delayMs: number; reason: 'throttled' | 'app-unavailable' }
  | { kind: 'retry' }
  | { kind: 'dead-letter'; category: ErrorCategory; message: string; errorCode?: number };

export interface FailureContext {
  /** Attempts already made before this one (BullMQ `attemptsMade`). */
  attemptsMade: number;
  maxAttempts: number;
  /** Times the batch was already put back for an unavailable application. */
  pauses: number;
}

/** How long the whole run waits when the application is disabled or unavailable. */
export const APP_UNAVAILABLE_PAUSE_MS = 60_000;
/** After this many pauses (an hour by default) the run stops. */
export const MAX_APP_UNAVAILABLE_PAUSES = 60;
const THROTTLED_DELAY_MS = 5_000;

/**
 * The one place rowbridge's error categories become queue behaviour:
 * throttled → put back without charging an attempt (the shared limiter slows everyone);
 * app-unavailable → paused and retried later; auth, config, forbidden, quota and a
 * vanished worksheet → the run stops with one message; transient, ambiguous and unknown
 * → BullMQ retries with backoff, and on the last attempt the rows are dead-lettered.
 */
export function decideBatchFailure(err: unknown, ctx: FailureContext): BatchFailureAction {
  const category = classifyError(err);
  const message = err instanceof Error ? err.message : String(err);
  if (stopsRun(err)) return { kind: 'stop-run', message, category };
  if (category === 'throttled') {
    const retryAfter = err instanceof ApiError ? err.retryAfterMs : undefined;
    return { kind: 'delay', delayMs: retryAfter ?? THROTTLED_DELAY_MS, reason: 'throttled' };
  }
  if (category === 'app-unavailable') {
    if (ctx.pauses >= MAX_APP_UNAVAILABLE_PAUSES) {
      return {
        kind: 'stop-run',
        message: `${message} (still unavailable after ${ctx.pauses} pauses)`,
        category,
      };
    }
    return { kind: 'delay', delayMs: APP_UNAVAILABLE_PAUSE_MS, reason: 'app-unavailable' };
  }
  if (ctx.attemptsMade + 1 < ctx.maxAttempts) return { kind: 'retry' };
  const errorCode = err instanceof ApiError ? err.errorCode : undefined;
  return { kind: 'dead-letter', category, message, ...(errorCode === undefined ? {} : { errorCode }) };
}

/** Puts a job back in the delayed set without charging an attempt (BullMQ's DelayedError). */
export async function delayJob(job: Job, token: string | undefined, delayMs: number): Promise<never> {
  await job.moveToDelayed(Date.now() + delayMs, token);
  throw new DelayedError();
}
