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
/** Without ROWBRIDGE_MEMORY, `lean` in a container or cgroup limited to this much or less. */
const LEAN_UNDER_BYTES = 1024 * MB;

/**
 * The memory mode ROWBRIDGE_MEMORY asks for: `fast` (V8's own sizing: the 1M-row import
 * of bench/import.ts peaks at about 370-400 MB) or `lean` (about 200 MB, for a fifth to a third
 * more CPU; bench/README.md). Unset: `lean` when the process runs under a memory limit
 * of 1 GiB or less (`limit`: a container's, from cgroups; 0 or 2^64 when there is none),
 * `fast` otherwise.
 */
export function memoryMode(
  env: NodeJS.ProcessEnv = process.env,
  limit: number = process.constrainedMemory(),
): MemoryMode {
  const asked = env.ROWBRIDGE_MEMORY?.trim().toLowerCase();
  if (asked === 'lean' || asked === 'fast') return asked;
  if (asked !== undefined && asked !== '') {
    throw new ConfigError(
      `ROWBRIDGE_MEMORY must be lean or fast, got "${env.ROWBRIDGE_MEMORY}": lean bounds the heap (about 200 MB for a 1M-row import, more CPU), fast lets V8 size it (about 400 MB)`,
    );
  }
  return limit > 0 && limit <= LEAN_UNDER_BYTES ? 'lean' : 'fast';
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
