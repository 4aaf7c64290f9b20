import { DelayedError } from 'bullmq';
import type { Job } from 'bullmq';
import { ApiError, classifyError, policyOf } from '../ground/errors.ts';
import type { ErrorCategory } from '../ground/errors.ts';

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
 * The one place a batch failure becomes queue behaviour, read off the category table in
 * src/ground/errors.ts (`CATEGORY_POLICY[category].batch`, or the override of the error's
 * platform code in `PLATFORM_ERROR_CODES`): `stop-run` stops the run with
 * one message; `delay` puts the batch back without charging an attempt (the shared
 * limiter slows everyone); `pause` puts it back for a minute, at most an hour, then
 * stops the run; `retry` lets BullMQ retry with backoff and, on the last attempt,
 * dead-letters the rows left open.
 */
export function decideBatchFailure(err: unknown, ctx: FailureContext): BatchFailureAction {
  const { category, batch } = policyOf(err);
  const message = err instanceof Error ? err.message : String(err);
  if (batch === 'stop-run') return { kind: 'stop-run', message, category };
  if (batch === 'delay') {
    const retryAfter = err instanceof ApiError ? err.retryAfterMs : undefined;
    return { kind: 'delay', delayMs: retryAfter ?? THROTTLED_DELAY_MS, reason: 'throttled' };
  }
  if (batch === 'pause') {
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

/** What a log line needs of an expected error: its name, message, category and code, no stack. */
export function briefly(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const { errorCode } = err as { errorCode?: unknown };
  return {
    name: err.name,
    message: err.message,
    category: classifyError(err),
    ...(errorCode === undefined ? {} : { errorCode }),
  };
}
