/**
 * Seeded fault injection. Every request draws the same number of random values whatever
 * happens to it, so a given sequence of requests meets the same faults on every run.
 */
import type { FaultOptions } from './options.ts';
import { createPrng } from './prng.ts';
import type { Prng } from './prng.ts';

export type FaultKind = 'reset-before-apply' | 'http-5xx' | 'error-99999' | 'reset-after-apply';

/** What happens to one request. */
export interface FaultDecision {
  latencyMs: number;
  /** At most one fault per request; undefined when it goes through cleanly. */
  kind: FaultKind | undefined;
  /** Status of an `http-5xx` fault. */
  httpStatus: number;
}

export interface FaultInjector {
  decide(isWrite: boolean): FaultDecision;
  /** Starts the sequence again from the seed (new fault settings, reset). */
  reseed(): void;
}

const STATUSES = [500, 502, 503, 504] as const;

export function createFaultInjector(faults: () => FaultOptions | undefined): FaultInjector {
  let prng: Prng | undefined;
  let seededWith: FaultOptions | undefined;

  return {
    decide(isWrite) {
      const options = faults();
      if (options === undefined) return { latencyMs: 0, kind: undefined, httpStatus: 0 };
      if (prng === undefined || seededWith !== options) {
        prng = createPrng(options.seed);
        seededWith = options;
      }
      const draws = [prng.next(), prng.next(), prng.next(), prng.next(), prng.next(), prng.next()] as const;
      if (options.writesOnly === true && !isWrite) return { latencyMs: 0, kind: undefined, httpStatus: 0 };
      const [min, max] = options.latencyMs ?? [0, 0];
      const latencyMs = Math.round(min + draws[0] * (max - min));
      const httpStatus = STATUSES[Math.floor(draws[5] * STATUSES.length)] ?? 503;
      let kind: FaultKind | undefined;
      if (draws[1] < (options.resetBeforeApply ?? 0)) kind = 'reset-before-apply';
      else if (draws[2] < (options.http5xx ?? 0)) kind = 'http-5xx';
      else if (draws[3] < (options.error99999 ?? 0)) kind = 'error-99999';
      else if (isWrite && draws[4] < (options.resetAfterApply ?? 0)) kind = 'reset-after-apply';
      return { latencyMs, kind, httpStatus };
    },
    reseed() {
      prng = undefined;
    },
  };
}
