import { setFlagsFromString } from 'node:v8';
import { ConfigError } from '../ground/errors.ts';
import { setByUser } from './v8-flags.ts';
import { capYoungGeneration } from './young-generation.ts';

/** How the V8 heap of a command is sized (ROWBRIDGE_MEMORY). */
export type MemoryMode = 'lean' | 'fast';

const MB = 1024 * 1024;
/** `lean`: each semi-space of the young generation at most this big (V8 default here: 64 MB). */
const LEAN_SEMI_SPACE_MB = 16;
/** `lean`: the old generation grows this much past what a full collection kept (V8: up to 300%). */
const LEAN_HEAP_GROWING_PERCENT = 50;

/**
 * The memory mode ROWBRIDGE_MEMORY asks for: `lean` (the default: the 1M-row import of
 * bench/import.ts peaks at about 185 MB) or `fast` (V8's own sizing: about 375 MB, for
 * about a tenth less CPU; bench/README.md, "Import, session 7"). Until session 7 the
 * default was `fast` unless the process ran under a memory limit of 1 GiB or less; `lean`
 * now meets issue 12's speed goals too, and a bounded peak is what a worker sharing a
 * machine (or one of many containers) needs.
 */
export function memoryMode(env: NodeJS.ProcessEnv = process.env): MemoryMode {
  const asked = env.ROWBRIDGE_MEMORY?.trim().toLowerCase();
  if (asked === 'lean' || asked === 'fast') return asked;
  if (asked !== undefined && asked !== '') {
    throw new ConfigError(
      `ROWBRIDGE_MEMORY must be lean or fast, got "${env.ROWBRIDGE_MEMORY}": lean (the default) bounds the heap (about 185 MB for a 1M-row import), fast lets V8 size it (about 375 MB, a tenth less CPU)`,
    );
  }
  return 'lean';
}

/**
 * Sizes the heap for `lean`, for the rest of the process (called once a command has
 * loaded: ./young-generation.ts holds the young generation small until then).
 *
 * - The young generation grows as V8 grows it, but not past 2 × 16 MB
 *   (./young-generation.ts, capYoungGeneration).
 * - The old generation's limit after a full collection is what it kept plus 50%
 *   (`--heap-growing-percent`, which V8 reads at each full collection), not V8's up to
 *   300%.
 *
 * A V8 flag the user set on the command line or in NODE_OPTIONS is left as set.
 */
export function leanHeap(): void {
  if (!setByUser(/heap[-_]growing[-_]percent/))
    setFlagsFromString(`--heap-growing-percent=${LEAN_HEAP_GROWING_PERCENT}`);
  capYoungGeneration(2 * LEAN_SEMI_SPACE_MB * MB);
}
