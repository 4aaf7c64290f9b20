/**
 * Leak check, run by vitest for every test file (`setupFiles` in vitest.config.ts): a
 * file fails when, after its own afterAll hooks, it leaves behind
 *
 * - Redis keys under the patterns it recorded (redis-prefixes.ts: the harness and
 *   `deleteKeys` record theirs) or under any `…-<pid>:` / `{…-<pid>}:` prefix, the
 *   convention of test prefixes (`rbtest-<name>-<pid>`); each file runs in its own
 *   forked worker, so the pid names this file's keys and no other's. Unit files, which
 *   must not touch Redis, are only scanned when they recorded a pattern;
 * - sockets, servers or child processes it opened (compared with the ones open before
 *   it ran) or timers it started and left pending: what keeps a process alive.
 *
 * The leftovers are named (keys, socket addresses, child commands) and the keys are
 * deleted, so one leaky file does not fail the next run too.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { Redis } from 'ioredis';
import { recordedRedisPatterns } from './redis-prefixes.ts';
import { describeHandle, liveHandles, pendingTimers, trackTimers } from './live-handles.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** How long handles get to finish closing (a quit() answered, a socket's close event not yet). */
const GRACE_MS = 2_000;
const POLL_MS = 50;
/** The real setTimeout, kept in case the file leaves fake timers installed. */
const { setTimeout: sleepTimer } = globalThis;
/** How many leftover keys the message lists before "and N more". */
const SHOWN_KEYS = 10;

let before = new Set<object>();
let file = '';

trackTimers();

beforeAll(() => {
  file = expect.getState().testPath ?? '';
  before = new Set(liveHandles());
});

// Registered first, so it runs after the file's own afterAll hooks (they run in reverse).
afterAll(async () => {
  const problems = [...(await leftoverKeys()), ...(await leftoverHandles())];
  if (problems.length > 0) throw new Error(`leak check: the file left behind\n  ${problems.join('\n  ')}`);
}, 30_000);

function patternsToScan(): string[] {
  const recorded = recordedRedisPatterns();
  if (recorded.length === 0 && /[\\/]test[\\/]unit[\\/]/.test(file)) return [];
  return [...new Set([...recorded, `*-${process.pid}:*`, `*-${process.pid}}:*`])];
}

async function leftoverKeys(): Promise<string[]> {
  const patterns = patternsToScan();
  if (patterns.length === 0) return [];
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    const found = new Set<string>();
    for (const pattern of patterns) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) found.add(key);
      } while (cursor !== '0');
    }
    if (found.size === 0) return [];
    const keys = [...found].sort();
    await redis.del(...keys);
    const shown = keys.slice(0, SHOWN_KEYS).join(', ');
    const more = keys.length > SHOWN_KEYS ? ` and ${keys.length - SHOWN_KEYS} more` : '';
    return [`${keys.length} Redis keys (now deleted): ${shown}${more}`];
  } finally {
    redis.disconnect();
  }
}

async function leftoverHandles(): Promise<string[]> {
  // Counted in polls, not by Date.now: a file may have left fake timers (and a fake clock) in place.
  for (let poll = 0; ; poll += 1) {
    const opened = liveHandles().filter((h) => !before.has(h));
    const timers = pendingTimers();
    if ((opened.length === 0 && timers.length === 0) || poll * POLL_MS >= GRACE_MS)
      return grouped([...opened.map(describeHandle), ...timers]);
    await new Promise((r) => sleepTimer(r, POLL_MS).unref());
  }
}

/** Equal lines once, with a count ("3 × pipe or unconnected socket"). */
function grouped(lines: string[]): string[] {
  const counts = new Map<string, number>();
  for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1);
  return [...counts].map(([line, n]) => (n === 1 ? line : `${n} × ${line}`));
}
