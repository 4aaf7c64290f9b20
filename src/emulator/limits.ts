/**
 * Per-credential request limits: a token bucket (error 51, the short-window throttle)
 * and a fixed-window count (error 90000, closer to a quota), as platform notes §1
 * describe the two codes. Both are off unless configured.
 */
import { EmulatorError } from './emulator-error.ts';
import type { QuotaOptions, RateLimitOptions } from './options.ts';

export interface RequestLimits {
  /** Counts one request of the credential; throws 51 or 90000 when over a limit. */
  admit(credentialId: string): void;
  /** Forgets every bucket and window (after a settings change or a reset). */
  clear(): void;
}

export interface RequestLimitsDeps {
  rateLimit: () => RateLimitOptions | undefined;
  quota: () => QuotaOptions | undefined;
  now: () => number;
}

export function createRequestLimits(deps: RequestLimitsDeps): RequestLimits {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const windows = new Map<string, { start: number; count: number }>();

  function takeToken(credentialId: string, rate: RateLimitOptions, now: number): void {
    const bucket = buckets.get(credentialId) ?? { tokens: rate.burst, at: now };
    bucket.tokens = Math.min(rate.burst, bucket.tokens + ((now - bucket.at) / 1000) * rate.requestsPerSecond);
    bucket.at = now;
    buckets.set(credentialId, bucket);
    if (bucket.tokens < 1) {
      throw new EmulatorError(
        51,
        `request rate limited: at most ${rate.requestsPerSecond} requests per second (burst ${rate.burst})`,
      );
    }
    bucket.tokens -= 1;
  }

  function count(credentialId: string, quota: QuotaOptions, now: number): void {
    let window = windows.get(credentialId);
    if (window === undefined || now >= window.start + quota.windowMs) {
      window = { start: now, count: 0 };
      windows.set(credentialId, window);
    }
    if (window.count >= quota.requests) {
      throw new EmulatorError(
        90000,
        `request quota exceeded: ${quota.requests} requests per ${quota.windowMs} ms`,
      );
    }
    window.count += 1;
  }

  return {
    admit(credentialId) {
      const now = deps.now();
      const rate = deps.rateLimit();
      if (rate !== undefined) takeToken(credentialId, rate, now);
      const quota = deps.quota();
      if (quota !== undefined) count(credentialId, quota, now);
    },
    clear() {
      buckets.clear();
      windows.clear();
    },
  };
}
