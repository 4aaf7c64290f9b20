/**
 * Lets a message through when it differs from the last one, or when `everyMs` passed
 * since the last one let through: an outage reported by a client on every reconnect
 * attempt becomes one line per interval instead of hundreds.
 */
export function createRepeatGate(
  everyMs: number,
  now: () => number = Date.now,
): (message: string) => boolean {
  let last: string | undefined;
  let at = 0;
  return (message) => {
    const t = now();
    if (message === last && t - at < everyMs) return false;
    last = message;
    at = t;
    return true;
  };
}
