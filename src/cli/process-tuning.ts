/**
 * Everything rowbridge does to V8 at run time, in one place (`bin/rowbridge.js` does the
 * one thing that must happen before our first module loads). The operator's side, the
 * glibc malloc variables and when to choose `fast`, is in docs/deployment.md: a process
 * cannot change its own allocator once started, so that belongs where a deployment sets
 * its environment (the Dockerfile, compose.yaml, a systemd unit), not in a restart.
 *
 * Two things, each measured in bench/ (bench/README.md has the figures):
 * - While a command starts, V8's young generation stays at its initial size and its
 *   optimizing compilers stay off. Starting is loading modules, and nearly all of it lives
 *   as long as the process: a young generation grown for it, and the compilers' machine
 *   code touched by a few hot path functions, would be kept resident by an idle worker.
 * - `lean` (ROWBRIDGE_MEMORY, the default) bounds the heap for the rest of the process:
 *   the young generation grows as V8 grows it but not past 2 x 16 MB, and the old
 *   generation grows 50% past what a full collection kept (V8: up to 300%).
 *
 * Both read flags V8 consults at each use (`--semi-space-growth-factor` when it grows the
 * young generation, the optimizer flags when a function's budget runs out,
 * `--heap-growing-percent` at each full collection), so setting them at run time takes
 * effect. A V8 flag the user set on the command line or in NODE_OPTIONS is left as set.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** How the V8 heap of a command is sized (ROWBRIDGE_MEMORY). */
export type MemoryMode = 'lean' | 'fast';

const MB = 1024 * 1024;
/** `lean`: both semi-spaces of the young generation together at most this big. */
const LEAN_YOUNG_BYTES = 2 * 16 * MB;
const LEAN_HEAP_GROWING_PERCENT = 50;
/** V8's default for `--semi-space-growth-factor`. */
const DEFAULT_GROWTH_FACTOR = 2;

/** What a command holds while it starts; each release is idempotent. */
export interface ProcessTuning {
  /** Young generation small and optimizers off, until the function returned is called. */
  holdWhileStarting(): () => void;
  /** The young generation alone held small (the worker releases it once started). */
  holdYoungGeneration(): () => void;
  /** The optimizing compilers alone held off (the worker releases them at its first job). */
  holdOptimizingCompilers(): () => void;
  /** Sizes the heap for the memory mode, once the command has loaded. */
  sizeHeap(): void;
}

/**
 * The tuning of this process. `userFlags` are the command line's V8 flags and
 * NODE_OPTIONS: a flag of the user's is never changed.
 */
export function createProcessTuning(mode: MemoryMode, userFlags: readonly string[]): ProcessTuning {
  const byUser = (pattern: RegExp) => userFlags.some((arg) => pattern.test(arg));
  const userFactor = byUser(/semi[-_]space[-_]growth[-_]factor/);
  const userSize = byUser(/semi[-_]space[-_]size/);
  const built = process.config.variables as Record<string, unknown>;
  const optimizers =
    byUser(/--(no[-_])?(turbofan|opt|maglev|jitless|lite[-_]mode)\b/) || Boolean(built.v8_enable_lite_mode)
      ? []
      : // Maglev can be left out of a V8 build; its flag is then read-only and off.
        built.v8_enable_maglev
        ? ['turbofan', 'maglev']
        : ['turbofan'];

  let youngHolds = 0;
  let capBytes: number | undefined;
  let factor: number | undefined;
  // The growth factor is 1 while held or once the cap is reached, V8's 2 otherwise.
  const steerYoung = (): void => {
    if (userFactor) return;
    let next = youngHolds > 0 ? 1 : DEFAULT_GROWTH_FACTOR;
    if (next > 1 && capBytes !== undefined && !userSize) {
      const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
      if (young !== undefined && young.space_size >= capBytes) next = 1;
    }
    if (next !== factor) setFlagsFromString(`--semi-space-growth-factor=${next}`);
    factor = next;
  };

  const once = (release: () => void): (() => void) => {
    let held = true;
    return () => {
      if (held) release();
      held = false;
    };
  };

  const tuning: ProcessTuning = {
    holdYoungGeneration() {
      youngHolds += 1;
      steerYoung();
      return once(() => {
        youngHolds -= 1;
        steerYoung();
      });
    },
    holdOptimizingCompilers() {
      if (optimizers.length === 0) return () => undefined;
      setFlagsFromString(optimizers.map((flag) => `--no-${flag}`).join(' '));
      return once(() => setFlagsFromString(optimizers.map((flag) => `--${flag}`).join(' ')));
    },
    holdWhileStarting() {
      // Held and released together: Node's compile cache is keyed by the V8 flags in
      // force, so every module must load under one set of them or its cached code is
      // rejected and compiled again.
      const releases = [tuning.holdYoungGeneration(), tuning.holdOptimizingCompilers()];
      return () => {
        for (const release of releases) release();
      };
    },
    sizeHeap() {
      if (mode !== 'lean') return;
      if (!byUser(/heap[-_]growing[-_]percent/))
        setFlagsFromString(`--heap-growing-percent=${LEAN_HEAP_GROWING_PERCENT}`);
      // `--max-semi-space-size` is read only when the heap is made: the cap is kept by
      // setting the growth factor after each collection.
      if (capBytes === undefined) new PerformanceObserver(steerYoung).observe({ entryTypes: ['gc'] });
      capBytes = LEAN_YOUNG_BYTES;
      steerYoung();
    },
  };
  return tuning;
}
