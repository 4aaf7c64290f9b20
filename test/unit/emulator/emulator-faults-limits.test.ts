import { describe, expect, it } from 'vitest';
import { EmulatorError } from '../../../src/emulator/emulator-error.ts';
import { createFaultInjector } from '../../../src/emulator/faults.ts';
import type { FaultDecision } from '../../../src/emulator/faults.ts';
import { createRequestLimits } from '../../../src/emulator/limits.ts';
import type { FaultOptions, QuotaOptions, RateLimitOptions } from '../../../src/emulator/options.ts';
import { resolveOptions, validateOptions } from '../../../src/emulator/options.ts';

function decisions(options: FaultOptions, count: number, isWrite = true): FaultDecision[] {
  const injector = createFaultInjector(() => options);
  return Array.from({ length: count }, () => injector.decide(isWrite));
}

function codeOf(fn: () => void): number | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error instanceof EmulatorError ? error.errorCode : -1;
  }
}

describe('emulator fault injector', () => {
  it('repeats the same decisions for the same seed and differs for another seed', () => {
    const options = { seed: 99, error99999: 0.3, http5xx: 0.2, latencyMs: [0, 50] as const };
    const a = decisions(options, 50);
    expect(decisions({ ...options }, 50)).toEqual(a);
    expect(decisions({ ...options, seed: 100 }, 50)).not.toEqual(a);
  });

  it('never fires at probability 0 and always at 1; latency stays in range', () => {
    expect(
      decisions({ seed: 1, error99999: 0, latencyMs: [10, 20] }, 100).every(
        (d) => d.kind === undefined && d.latencyMs >= 10 && d.latencyMs <= 20,
      ),
    ).toBe(true);
    expect(decisions({ seed: 1, error99999: 1 }, 20).every((d) => d.kind === 'error-99999')).toBe(true);
  });

  it('resets after apply only for writes', () => {
    expect(decisions({ seed: 5, resetAfterApply: 1 }, 10, false).every((d) => d.kind === undefined)).toBe(
      true,
    );
    expect(
      decisions({ seed: 5, resetAfterApply: 1 }, 10, true).every((d) => d.kind === 'reset-after-apply'),
    ).toBe(true);
  });

  it('draws the same number of values per request whatever the outcome', () => {
    // Reads and writes consume the sequence alike, so later requests meet the same faults.
    const options = { seed: 11, http5xx: 0.3 };
    const mixed = createFaultInjector(() => options);
    const writesOnly = createFaultInjector(() => options);
    const a = Array.from({ length: 30 }, (_, i) => mixed.decide(i % 2 === 0).kind);
    const b = Array.from({ length: 30 }, () => writesOnly.decide(true).kind);
    expect(a).toEqual(b);
  });

  it('can spare reads (writesOnly) without shifting the sequence of writes', () => {
    const options = { seed: 8, error99999: 0.5, writesOnly: true };
    const injector = createFaultInjector(() => options);
    const mixed = Array.from({ length: 20 }, (_, i) => injector.decide(i % 2 === 0));
    expect(mixed.filter((_, i) => i % 2 === 1).every((d) => d.kind === undefined)).toBe(true);
    const all = decisions(options, 20);
    expect(mixed.filter((_, i) => i % 2 === 0)).toEqual(all.filter((_, i) => i % 2 === 0));
  });

  it('starts over after reseed', () => {
    const options = { seed: 3, error99999: 0.5 };
    const injector = createFaultInjector(() => options);
    const first = Array.from({ length: 10 }, () => injector.decide(true).kind);
    injector.reseed();
    expect(Array.from({ length: 10 }, () => injector.decide(true).kind)).toEqual(first);
  });
});

describe('emulator request limits', () => {
  function limits(rate: RateLimitOptions | undefined, quota: QuotaOptions | undefined) {
    const clock = { now: 0 };
    return {
      clock,
      limits: createRequestLimits({ rateLimit: () => rate, quota: () => quota, now: () => clock.now }),
    };
  }

  it('lets a burst through, then refills at the configured rate, per credential', () => {
    const { clock, limits: l } = limits({ requestsPerSecond: 2, burst: 3 }, undefined);
    expect([1, 2, 3, 4].map(() => codeOf(() => l.admit('a')))).toEqual([undefined, undefined, undefined, 51]);
    expect(codeOf(() => l.admit('b'))).toBeUndefined();
    clock.now = 500; // one token back at 2 per second
    expect(codeOf(() => l.admit('a'))).toBeUndefined();
    expect(codeOf(() => l.admit('a'))).toBe(51);
    clock.now = 10_000; // never more than the burst
    expect([1, 2, 3, 4].map(() => codeOf(() => l.admit('a')))).toEqual([undefined, undefined, undefined, 51]);
  });

  it('counts requests per window', () => {
    const { clock, limits: l } = limits(undefined, { requests: 2, windowMs: 1000 });
    expect([1, 2, 3].map(() => codeOf(() => l.admit('a')))).toEqual([undefined, undefined, 90000]);
    clock.now = 999;
    expect(codeOf(() => l.admit('a'))).toBe(90000);
    clock.now = 1000;
    expect(codeOf(() => l.admit('a'))).toBeUndefined();
    l.clear();
    expect([1, 2, 3].map(() => codeOf(() => l.admit('a')))).toEqual([undefined, undefined, 90000]);
  });
});

describe('emulator options', () => {
  it("fills defaults: the public platform's dialect unless spec is asked for", () => {
    expect(resolveOptions()).toMatchObject({
      dialect: 'platform',
      timeZone: 'Asia/Shanghai',
      port: 0,
      host: '127.0.0.1',
      headerPrefix: 'HAP-',
      rowShape: 'flat',
      typeFormat: 'name',
      maxOptionsPerField: 100,
      maxAttachmentsPerField: 20,
    });
    expect(resolveOptions({ dialect: 'spec' })).toMatchObject({
      headerPrefix: 'APP-',
      rowShape: 'fields',
      typeFormat: 'code',
    });
    expect(() => resolveOptions({ dialect: 'v2' as never })).toThrow(/dialect must be "platform" or "spec"/);
  });

  it('names the option that is wrong', () => {
    expect(() => validateOptions({ faults: { seed: 1, http5xx: 1.5 } })).toThrow(/faults\.http5xx/);
    expect(() => validateOptions({ faults: { seed: 1, latencyMs: [20, 10] } })).toThrow(/faults\.latencyMs/);
    expect(() => validateOptions({ rateLimit: { requestsPerSecond: 0, burst: 1 } })).toThrow(
      /rateLimit\.requestsPerSecond/,
    );
    expect(() => validateOptions({ maxBatchRows: -1 })).toThrow(/maxBatchRows/);
    expect(() => validateOptions({ requestLogLimit: 0 })).toThrow(/requestLogLimit/);
  });
});
