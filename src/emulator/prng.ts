/** A seeded pseudo-random source: reproducible fault sequences. */
export interface Prng {
  /** Next number in [0, 1). */
  next(): number;
}

/** mulberry32: tiny, fast and good enough to decide whether a fault fires. */
export function createPrng(seed: number): Prng {
  let state = seed >>> 0;
  return {
    next() {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}
