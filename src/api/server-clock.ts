/**
 * The platform's clock as its answers tell it. Times the platform stamps (`_updatedAt`,
 * `utime`) are on its clock, not this machine's, and a cursor that must not pass an edit
 * still to come has to be taken on that clock.
 *
 * Every answer of an HTTP origin server with a clock carries `Date` (RFC 9110 §6.6.1);
 * the platform's documents say nothing of it [U], so without one the caller falls back to
 * its own clock. Each `Date` is kept with the moment it arrived on the monotonic clock:
 * the platform's time now is that `Date` plus the time elapsed since, whatever this
 * machine's wall clock says or does meanwhile (NTP stepping it). `Date` is whole seconds,
 * rounded down, and stamped before the answer travels: each answer tells a time behind the
 * platform's clock by up to a second plus its way back, never ahead of it. So the answer
 * that tells the latest time counts (answers arrive at every fraction of a second: with a
 * few, the estimate is short by little more than an answer's way back), among those of
 * the last minute: a platform whose clock was stepped back is believed a minute later. (A
 * proxy in front of the platform may stamp its own `Date`: its clock then counts, and the
 * cursor margin covers the difference between the two.)
 */

/** The platform's clock, as far as its answers told it. */
export interface ServerClock {
  /** Notes an answer's `Date` header; an absent or unreadable one is ignored. */
  see(date: string | string[] | undefined): void;
  /** The platform's time now (epoch ms), or undefined while no answer has carried a `Date`. */
  now(): number | undefined;
}

/** How long the answer telling the latest time is preferred to later answers telling less. */
const KEEP_MS = 60_000;

/** A server clock; `monotonic` is injectable for tests. */
export function createServerClock(monotonic: () => number = () => performance.now()): ServerClock {
  // The platform's time less the monotonic clock, as the best answer told it, and when.
  let best: { offset: number; at: number } | undefined;
  return {
    see(date) {
      const text = Array.isArray(date) ? date[0] : date;
      if (text === undefined) return;
      const ms = Date.parse(text);
      if (!Number.isFinite(ms)) return;
      const at = monotonic();
      const offset = Math.floor(ms / 1000) * 1000 - at;
      if (best === undefined || offset >= best.offset || at - best.at > KEEP_MS) best = { offset, at };
    },
    now() {
      return best === undefined ? undefined : monotonic() + best.offset;
    },
  };
}
