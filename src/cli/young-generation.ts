import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { setByUser } from './v8-flags.ts';

/** V8's default for `--semi-space-growth-factor` (node --v8-options). */
const DEFAULT_GROWTH_FACTOR = 2;

/** The user's own V8 flags win: a growth factor of theirs is never changed, a size of theirs never capped. */
const userFactor = setByUser(/semi[-_]space[-_]growth[-_]factor/);
const userSize = setByUser(/semi[-_]space[-_]size/);

/** Holds open, the cap of capYoungGeneration (both semi-spaces), the growth factor last set. */
let holds = 0;
let capBytes: number | undefined;
let factor: number | undefined;

/**
 * Keeps V8's young generation at its initial size (1 MB a semi-space) while a command
 * starts. The function returned gives it V8's default growth back (or the cap of
 * {@link capYoungGeneration}) once no other hold is open; calling it twice is harmless.
 *
 * Why: starting is loading modules and wiring clients, and nearly everything that
 * allocates lives as long as the process. V8 doubles the young generation after each
 * scavenge in which more survived than it holds, so start-up alone takes it to its maximum
 * (2 × 16 MB), which an idle process then keeps: an idle worker had 33.6 MB of young
 * generation committed with 12 MB in use. While almost everything survives, a larger
 * young generation saves nothing (each survivor is copied either way). Held during start:
 * idle `worker --no-schedules` 91 → 82 MB, a worker as the Docker image starts it
 * 115 → 101 MB. The work that follows gets the default back: held at 1 MB throughout, a
 * 300,000-row `run` took 12-18% more CPU (for about 30% less peak memory).
 *
 * How: V8 reads the growth factor each time it grows the young generation
 * (`SemiSpaceNewSpace::Grow`), so setting it at runtime takes effect, unlike
 * `--max-semi-space-size`, which is read once when the heap is made. Node warns that
 * flags changed after start may behave unpredictably; this one is a number read on the
 * main thread inside a GC. A user who set the factor on the command line or in
 * NODE_OPTIONS keeps it.
 */
export function holdYoungGeneration(): () => void {
  holds += 1;
  steer();
  let held = true;
  return () => {
    if (held) holds -= 1;
    held = false;
    steer();
  };
}

/**
 * Lets the young generation grow as V8 grows it (doubling after a busy scavenge) but not
 * past `bytes` (both semi-spaces). `--max-semi-space-size` is read only when the heap is
 * made, so after each garbage collection the growth factor is set to 1 once that size is
 * reached (and back to V8's 2 should V8 shrink it); holds still keep it at 1. For
 * ROWBRIDGE_MEMORY=lean (./memory-mode.ts).
 */
export function capYoungGeneration(bytes: number): void {
  if (capBytes === undefined) new PerformanceObserver(steer).observe({ entryTypes: ['gc'] });
  capBytes = bytes;
  steer();
}

function steer(): void {
  if (userFactor) return;
  let next = holds > 0 ? 1 : DEFAULT_GROWTH_FACTOR;
  if (next > 1 && capBytes !== undefined && !userSize) {
    const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    if (young !== undefined && young.space_size >= capBytes) next = 1;
  }
  if (next !== factor) setFlagsFromString(`--semi-space-growth-factor=${next}`);
  factor = next;
}
