import { describe, expect, it } from 'vitest';
import {
  ApiError,
  CATEGORY_POLICY,
  ConfigError,
  PLATFORM_ERROR_CODES,
  categoryOfCode,
  classifyError,
  networkError,
} from '../../../src/ground/errors.ts';
import { parseRetryAfter, readEnvelope } from '../../../src/api/envelope.ts';
import type { RawResponse } from '../../../src/api/envelope.ts';
import { UsageError } from '../../../src/cli/args.ts';
import { BadRequest } from '../../../src/ops/dashboard/dashboard-http.ts';

// Every code of spec §7 with the category the foundation issue assigns it.
const EXPECTED: Array<[number, string]> = [
  [0, 'unknown'],
  [51, 'throttled'],
  [90000, 'throttled'],
  [99999, 'transient'],
  [600100, 'auth-refresh'],
  [10105, 'auth-refresh'],
  [10101, 'auth'],
  [10102, 'auth'],
  [10106, 'auth'],
  [600101, 'auth'],
  [600102, 'auth'],
  [600103, 'auth'],
  [600104, 'auth'],
  [600311, 'auth'],
  [600312, 'auth'],
  [10000, 'forbidden'],
  [10005, 'forbidden'],
  [430014, 'forbidden'],
  [600113, 'forbidden'],
  [600320, 'forbidden'],
  [600300, 'app-unavailable'],
  [600302, 'app-unavailable'],
  [10001, 'invalid-row'],
  [10002, 'invalid-row'],
  [430019, 'invalid-row'],
  [430020, 'invalid-row'],
  [430021, 'invalid-row'],
  [100005, 'invalid-row'],
  [100006, 'invalid-row'],
  [100007, 'invalid-row'],
  [10006, 'conflict'],
  [10007, 'not-found'],
  [430013, 'not-found'],
  [430022, 'not-found'],
  [430017, 'quota'],
  [430018, 'quota'],
  [600000, 'config'],
  [600001, 'config'],
  [600002, 'config'],
  [600003, 'config'],
  [600004, 'config'],
  [600112, 'config'],
];

const ref = { method: 'POST', path: '/v3/app/worksheets/ws1/rows/batch', isWrite: true };

function envelope(body: unknown, status = 200, headers: RawResponse['headers'] = {}): RawResponse {
  return { status, headers, body, json: true };
}

describe('error taxonomy', () => {
  it.each(EXPECTED)('code %i is %s', (code, category) => {
    expect(categoryOfCode(code)).toBe(category);
    expect(PLATFORM_ERROR_CODES[code]?.meaning).toBeTruthy();
  });

  it('covers exactly the codes of the spec', () => {
    expect(Object.keys(PLATFORM_ERROR_CODES).map(Number).sort()).toEqual(EXPECTED.map(([c]) => c).sort());
  });

  it('gives unknown codes a safe default that retries a little and stops nothing', () => {
    expect(categoryOfCode(123456)).toBe('unknown');
    expect(CATEGORY_POLICY.unknown).toMatchObject({ retry: 'backoff', run: 'retry', batch: 'retry' });
  });

  it.each(EXPECTED)('an envelope carrying %i throws an ApiError of category %s', (code, category) => {
    const run = () => readEnvelope(envelope({ success: false, error_code: code, error_msg: 'nope' }), ref);
    expect(run).toThrow(ApiError);
    try {
      run();
    } catch (err) {
      expect((err as ApiError).category).toBe(category);
      expect((err as ApiError).errorCode).toBe(code);
      expect((err as ApiError).message).toContain(`POST ${ref.path}`);
      expect((err as ApiError).message).toContain(String(code));
    }
  });

  // What a run and a batch do with each category is asserted as behaviour, through
  // decideBatchFailure, in test/unit/queue/queue-error-policy.test.ts.
  it('client retries: throttled paces, ambiguous reconciles, an expired token refreshes, auth never retries', () => {
    expect(CATEGORY_POLICY.throttled.retry).toBe('pace');
    expect(CATEGORY_POLICY.ambiguous.retry).toBe('reconcile');
    expect(CATEGORY_POLICY['auth-refresh'].retry).toBe('refresh');
    expect(CATEGORY_POLICY.auth.retry).toBe('never');
  });

  it('classifies any thrown value', () => {
    expect(classifyError(new ConfigError('x'))).toBe('config');
    // Every error class of rowbridge carries its category, a wrong command line or query included.
    expect(classifyError(new UsageError('unknown option --x'))).toBe('config');
    expect(classifyError(new BadRequest('query parameter "page" must be given once'))).toBe('config');
    expect(classifyError(new TypeError('bug'))).toBe('unknown');
    expect(classifyError('string')).toBe('unknown');
  });
});

describe('envelope', () => {
  it('returns data on error_code 1 and on success:true with code 0', () => {
    expect(readEnvelope(envelope({ success: true, error_code: 1, data: { id: 'a' } }), ref)).toEqual({
      id: 'a',
    });
    expect(readEnvelope(envelope({ success: true, error_code: 0, data: 5 }), ref)).toBe(5);
  });

  it('reads the code/msg spelling', () => {
    expect(readEnvelope(envelope({ code: 1, msg: '', data: [1] }), ref)).toEqual([1]);
    expect(() => readEnvelope(envelope({ code: 430022, msg: 'gone' }), ref)).toThrow(
      /430022.*worksheet does not exist.*gone/,
    );
  });

  it('maps HTTP failures without an envelope', () => {
    const cat = (status: number, isWrite: boolean) => {
      try {
        readEnvelope({ status, headers: {}, body: 'bad gateway', json: false }, { ...ref, isWrite });
      } catch (err) {
        return (err as ApiError).category;
      }
      return 'none';
    };
    expect(cat(429, true)).toBe('throttled');
    expect(cat(503, true)).toBe('transient');
    expect(cat(504, true)).toBe('ambiguous');
    expect(cat(504, false)).toBe('transient');
    expect(cat(401, false)).toBe('auth');
    expect(cat(403, false)).toBe('forbidden');
    expect(cat(404, false)).toBe('not-found');
  });

  it('treats a 2xx non-JSON answer to a write as ambiguous and to a read as transient', () => {
    const raw: RawResponse = { status: 200, headers: {}, body: '<html>', json: false };
    expect(() => readEnvelope(raw, ref)).toThrow(expect.objectContaining({ category: 'ambiguous' }));
    expect(() => readEnvelope(raw, { ...ref, isWrite: false })).toThrow(
      expect.objectContaining({ category: 'transient' }),
    );
  });

  it('honours Retry-After in seconds and as a date', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(new Date(10_000 + 5_000).toUTCString(), 10_000)).toBe(5000);
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(() =>
      readEnvelope(envelope({ success: false, error_code: 51 }, 200, { 'retry-after': '2' }), ref),
    ).toThrow(expect.objectContaining({ category: 'throttled', retryAfterMs: 2000 }));
  });

  it('clips long server messages', () => {
    const long = 'x'.repeat(5000);
    try {
      readEnvelope(envelope({ success: false, error_code: 10002, error_msg: long }), ref);
    } catch (err) {
      expect((err as Error).message.length).toBeLessThan(400);
    }
    expect.assertions(1);
  });
});

describe('network errors', () => {
  it('are transient before sending and ambiguous after sending a write', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    expect(networkError(refused, ref).category).toBe('transient');
    expect(networkError(reset, ref).category).toBe('ambiguous');
    expect(networkError(reset, { ...ref, isWrite: false }).category).toBe('transient');
    expect(networkError(reset, ref).cause).toBe(reset);
  });
});
