import { holdOptimizingCompilers } from './optimizing-compilers.ts';
import { holdYoungGeneration } from './young-generation.ts';

/**
 * Puts V8 in its start-up mode: young generation kept small (./young-generation.ts) and
 * optimizing compilers off (./optimizing-compilers.ts). The function returned restores
 * both; calling it twice is harmless.
 *
 * Both are held and released together, at the same points for every command, because
 * V8's code cache (Node's compile cache) is keyed by the V8 flags in force: a module
 * loaded under other flags than last time finds its cached code rejected and is compiled
 * again, which for the worker costs about 25 MB and 150 ms at that start. The worker
 * holds them again while it starts and gives the compilers back only at its first job;
 * nothing is imported in between, so every module still loads under one set of flags.
 */
export function holdWhileStarting(): () => void {
  const releases = [holdYoungGeneration(), holdOptimizingCompilers()];
  return () => {
    for (const release of releases) release();
  };
}
