import { setFlagsFromString } from 'node:v8';
import { setByUser } from './v8-flags.ts';

/**
 * Keeps V8's optimizing compilers (Maglev and Turbofan) off while a command starts. The
 * function returned turns them back on; calling it twice is harmless.
 *
 * Why: while starting, a few of Node's own functions (module resolution, `path`, `URL`)
 * run often enough for V8 to optimize them: about sixty Maglev compilations and one
 * Turbofan compilation. They save nothing measurable in a start of 250 ms, but they are
 * what first touches those compilers' machine code in the node binary, and an idle worker
 * then keeps those pages resident: idle `worker --no-schedules` 82.8–83.7 → 77.1–77.5 MB
 * with Turbofan held, 73.4–74.1 MB with both (issue 12).
 *
 * How: V8 asks whether an optimizer is enabled each time a function's budget runs out
 * (`TieringManager`), so setting the flags at runtime takes effect, both ways: a function
 * that ran hot while they were off is optimized as soon as it runs hot again after. The
 * work that follows has both compilers as usual. A user who set any of these flags on the
 * command line or in NODE_OPTIONS (or runs a V8 built without them) keeps them as set.
 * `bin/rowbridge.js` already turns them off before the first module of ours is resolved
 * (with the same test of the user's flags); the release here turns them on either way.
 */
export function holdOptimizingCompilers(): () => void {
  const built = process.config.variables as Record<string, unknown>;
  if (
    setByUser(/--(no[-_])?(turbofan|opt|maglev|jitless|lite[-_]mode)\b/) ||
    Boolean(built.v8_enable_lite_mode)
  )
    return () => undefined;
  // Maglev can be left out of a V8 build; its flag is then read-only and off.
  const flags = built.v8_enable_maglev ? ['turbofan', 'maglev'] : ['turbofan'];
  setFlagsFromString(flags.map((flag) => `--no-${flag}`).join(' '));
  let held = true;
  return () => {
    if (held) setFlagsFromString(flags.map((flag) => `--${flag}`).join(' '));
    held = false;
  };
}
