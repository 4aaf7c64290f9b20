import { describe, expect, it } from 'vitest';
import { ApiError, ConfigError } from '../../../src/ground/errors.ts';
import type { ErrorCategory } from '../../../src/ground/errors.ts';
import { briefly, decideBatchFailure, MAX_APP_UNAVAILABLE_PAUSES } from '../../../src/queue/error-policy.ts';
import { isRedisOutage } from '../../../src/ground/redis-outage.ts';
import { RunStoppedError } from '../../../src/sync/write/run-stopped-error.ts';

const api = (category: ErrorCategory, errorCode?: number, retryAfterMs?: number) =>
  new ApiError(`POST /v3/x: ${category}`, {
    method: 'POST',
    path: '/v3/x',
    category,
    ...(errorCode === undefined ? {} : { errorCode }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });

const early = { attemptsMade: 0, maxAttempts: 5, pauses: 0 };
const last = { attemptsMade: 4, maxAttempts: 5, pauses: 0 };

describe('batch failure policy (the one place categories become queue behaviour)', () => {
  it('puts throttled batches back without an attempt, honouring Retry-After', () => {
    expect(decideBatchFailure(api('throttled', 51), last)).toEqual({
      kind: 'delay',
      delayMs: 5000,
      reason: 'throttled',
    });
    expect(decideBatchFailure(api('throttled', 90000, 42_000), early)).toMatchObject({
      kind: 'delay',
      delayMs: 42_000,
    });
  });

  it('pauses on an unavailable application, then stops the run after too many pauses', () => {
    expect(decideBatchFailure(api('app-unavailable', 600300), early)).toMatchObject({
      kind: 'delay',
      reason: 'app-unavailable',
    });
    expect(
      decideBatchFailure(api('app-unavailable', 600300), { ...early, pauses: MAX_APP_UNAVAILABLE_PAUSES }),
    ).toMatchObject({
      kind: 'stop-run',
    });
  });

  it.each([
    ['auth', 10102],
    ['forbidden', 10005],
    ['quota', 430018],
    ['not-found', 430022],
  ] as const)('stops the run on %s (%i)', (category, code) => {
    expect(decideBatchFailure(api(category, code), early)).toMatchObject({ kind: 'stop-run', category });
  });

  it("stops the run on configuration errors and on the engine's own stop", () => {
    expect(decideBatchFailure(new ConfigError('bad mapping'), early)).toMatchObject({
      kind: 'stop-run',
      category: 'config',
    });
    expect(decideBatchFailure(new RunStoppedError('odd answer', 'unknown'), early)).toMatchObject({
      kind: 'stop-run',
    });
  });

  it('retries transient, ambiguous and unknown failures, then dead-letters on the last attempt with the code', () => {
    for (const category of ['transient', 'ambiguous', 'unknown'] as const) {
      expect(decideBatchFailure(api(category, 99999), early)).toEqual({ kind: 'retry' });
      expect(decideBatchFailure(api(category, 99999), last)).toMatchObject({
        kind: 'dead-letter',
        category,
        errorCode: 99999,
      });
    }
    expect(decideBatchFailure(new Error('bug'), last)).toMatchObject({
      kind: 'dead-letter',
      category: 'unknown',
    });
  });

  it('treats a vanished row (10007) as row-level, not a reason to stop', () => {
    expect(decideBatchFailure(api('not-found', 10007), early)).toEqual({ kind: 'retry' });
    expect(decideBatchFailure(api('not-found', 10007), last)).toMatchObject({
      kind: 'dead-letter',
      category: 'not-found',
      errorCode: 10007,
    });
  });

  it('stops the run when the worksheet is gone (430013, 430022), whatever the attempt', () => {
    for (const code of [430013, 430022]) {
      expect(decideBatchFailure(api('not-found', code), early)).toMatchObject({ kind: 'stop-run' });
      expect(decideBatchFailure(api('not-found', code), last)).toMatchObject({ kind: 'stop-run' });
    }
  });

  // Each category of the taxonomy, as a batch meets it: which stop the run, which put the
  // batch back, and which dead-letter the rows left open on the last attempt.
  const CATEGORY_OUTCOME: Record<ErrorCategory, 'stop-run' | 'delay' | 'dead-letter'> = {
    throttled: 'delay',
    transient: 'dead-letter',
    ambiguous: 'dead-letter',
    'auth-refresh': 'dead-letter',
    auth: 'stop-run',
    config: 'stop-run',
    forbidden: 'stop-run',
    'app-unavailable': 'delay',
    'invalid-row': 'dead-letter',
    conflict: 'dead-letter',
    'not-found': 'dead-letter',
    quota: 'stop-run',
    unknown: 'dead-letter',
  };
  it.each(Object.entries(CATEGORY_OUTCOME))('on its last attempt, %s: %s', (category, kind) => {
    const action = decideBatchFailure(api(category as ErrorCategory), last);
    expect(action.kind).toBe(kind);
    if (kind === 'dead-letter')
      expect(decideBatchFailure(api(category as ErrorCategory), early).kind).toBe('retry');
  });
});

describe('what a batch failure log line carries', () => {
  const outage = Object.assign(new Error('Reached the max retries per request limit (which is 3).'), {
    name: 'MaxRetriesPerRequestError',
  });

  it('knows a Redis outage, also wrapped by the store that met it', () => {
    expect(isRedisOutage(outage)).toBe(true);
    expect(isRedisOutage(new Error('key index: script set failed', { cause: outage }))).toBe(true);
    expect(isRedisOutage(new Error('Connection is closed.'))).toBe(true);
    expect(isRedisOutage(new Error('connect ECONNREFUSED 127.0.0.1:5432'))).toBe(false);
  });

  it('says an expected error briefly: name, message, category and code, no stack', () => {
    const err = new ApiError('POST /v3/app/worksheets/x/rows/batch: 10001 parameter error', {
      method: 'POST',
      path: '/v3/app/worksheets/x/rows/batch',
      category: 'invalid-row',
      errorCode: 10001,
    });
    expect(briefly(err)).toEqual({
      name: 'ApiError',
      message: err.message,
      category: 'invalid-row',
      errorCode: 10001,
    });
    expect(briefly(outage)).not.toHaveProperty('stack');
  });
});
