import { createPrng } from '../../src/emulator/prng.ts';

/** Numbers in [0, 1) from a seed (the emulator's mulberry32), so a failing case repeats. */
export function seededRandom(seed: number): () => number {
  const prng = createPrng(seed);
  return () => prng.next();
}
