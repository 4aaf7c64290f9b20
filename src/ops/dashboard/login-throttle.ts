/**
 * What a dashboard login may cost (issue 22, item 1). A password check is one scrypt
 * (16 MiB, tens of ms) on libuv's four-thread pool, which the worker serving the
 * dashboard shares with its file reads, DNS lookups and zlib: unbounded, a flood of
 * wrong passwords stalls both. So at most `concurrent` checks run at once (the caller
 * answers 429 beyond), and each client address has a budget of failed logins after which
 * it is locked out, with a backoff that doubles with every further failure.
 *
 * Per address, not per user name: a guesser varies the name for free. IPv6 addresses
 * count per /64, the block one subscriber usually gets. Behind a reverse proxy every
 * client has the proxy's address, so one guesser locks everyone out for the backoff;
 * forwarded headers are not trusted, as anyone can write them.
 */

/** Limits of dashboard logins; every field is optional. */
export interface LoginLimits {
  /** Password checks (scrypt) running at once; a login beyond is answered 429. @defaultValue 2 */
  concurrent?: number;
  /** Failed logins an address may make before it is locked out. @defaultValue 5 */
  failureBudget?: number;
  /** First lock-out, doubled with each failure after it. @defaultValue 1000 */
  backoffMs?: number;
  /** Longest lock-out. @defaultValue 900000 (15 min) */
  maxBackoffMs?: number;
}

/** The throttle of {@link createLoginThrottle}. */
export interface LoginThrottle {
  /** How long `address` must still wait before its next login is checked; 0 when it may now. */
  lockedForMs(address: string): number;
  /** Runs a password check if fewer than `concurrent` run; undefined (nothing run) when busy. */
  tryCheck<T>(check: () => Promise<T>): Promise<T> | undefined;
  /** A login from `address` failed: one more against its budget. */
  failed(address: string): void;
  /** A login from `address` succeeded: its failures are forgiven. */
  succeeded(address: string): void;
}

interface Failures {
  count: number;
  lockedUntil: number;
  lastAt: number;
}

/** Addresses remembered at most; the oldest is forgotten first (a flood from many addresses cannot grow memory). */
const MAX_ADDRESSES = 10_000;

/** The key an address is counted under: IPv4 as is (also when IPv4-mapped), IPv6 by its /64. */
export function clientKey(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined) return mapped[1];
  if (!address.includes(':')) return address;
  const [head = '', tail] = address.toLowerCase().split('%')[0]?.split('::') ?? [];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

export function createLoginThrottle(limits: LoginLimits = {}, now: () => number = Date.now): LoginThrottle {
  const concurrent = limits.concurrent ?? 2;
  const budget = limits.failureBudget ?? 5;
  const backoffMs = limits.backoffMs ?? 1000;
  const maxBackoffMs = limits.maxBackoffMs ?? 15 * 60_000;
  const failures = new Map<string, Failures>();
  let running = 0;

  /** The record of `key`, dropped once it has been quiet as long as the longest lock-out. */
  function current(key: string): Failures | undefined {
    const entry = failures.get(key);
    if (entry !== undefined && now() - Math.max(entry.lastAt, entry.lockedUntil) > maxBackoffMs) {
      failures.delete(key);
      return undefined;
    }
    return entry;
  }

  return {
    lockedForMs(address) {
      const entry = current(clientKey(address));
      return entry === undefined ? 0 : Math.max(0, entry.lockedUntil - now());
    },

    tryCheck(check) {
      if (running >= concurrent) return undefined;
      running += 1;
      return check().finally(() => {
        running -= 1;
      });
    },

    failed(address) {
      const key = clientKey(address);
      const entry = current(key) ?? { count: 0, lockedUntil: 0, lastAt: 0 };
      entry.count += 1;
      entry.lastAt = now();
      if (entry.count >= budget) {
        const wait = Math.min(backoffMs * 2 ** Math.min(entry.count - budget, 30), maxBackoffMs);
        entry.lockedUntil = entry.lastAt + wait;
      }
      // Re-inserted so the Map's order is least recently failed first.
      failures.delete(key);
      if (failures.size >= MAX_ADDRESSES) {
        const oldest = failures.keys().next();
        if (oldest.done !== true) failures.delete(oldest.value);
      }
      failures.set(key, entry);
    },

    succeeded(address) {
      failures.delete(clientKey(address));
    },
  };
}
