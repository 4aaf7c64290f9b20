/**
 * The handles keeping this process alive, for the leak check (leak-check.ts).
 * `process.getActiveResourcesInfo()` only gives type names, and its timer count moves
 * with vitest's own timers; so sockets, servers and child processes come from Node's
 * `process._getActiveHandles()` (deprecated in docs only, DEP0161), which gives the
 * objects to compare and describe, and timers are tracked where they are created.
 */
import type { ChildProcess } from 'node:child_process';
import { Server, Socket } from 'node:net';

const processWithHandles = process as NodeJS.Process & { _getActiveHandles?: () => object[] };

/** The referenced sockets, servers and child processes (and other handles) now open. */
export function liveHandles(): object[] {
  return processWithHandles._getActiveHandles?.() ?? [];
}

/** What a handle is, in words a reader can trace back to a test. */
export function describeHandle(handle: object): string {
  if (handle instanceof Socket) {
    if (handle.remoteAddress !== undefined)
      return `socket to ${handle.remoteAddress}:${handle.remotePort} (from port ${handle.localPort})`;
    return 'pipe or unconnected socket (a child process stdio?)';
  }
  if (handle instanceof Server) {
    const address = handle.address();
    const where = typeof address === 'string' ? address : `${address?.address}:${address?.port}`;
    return `server listening on ${where}`;
  }
  if (isChild(handle)) return `child process ${handle.pid}: ${handle.spawnargs.join(' ')}`;
  return `handle ${handle.constructor.name}`;
}

function isChild(handle: object): handle is ChildProcess {
  return 'spawnargs' in handle && 'pid' in handle;
}

/** A Node Timeout as the leak check reads it: `_destroyed` once fired or cleared. */
type Timer = NodeJS.Timeout & { _destroyed?: boolean };

const created = new Map<Timer, string>();

function live(timer: Timer): boolean {
  return timer._destroyed !== true && timer.hasRef();
}

/** Where a timer was created: the first frame of this project, else the first outside Node. */
function creationSite(): string {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 40;
  const stack = new Error().stack?.split('\n').slice(2) ?? [];
  Error.stackTraceLimit = limit;
  const outsideNode = stack.filter((l) => !/\(node:|<anonymous>|live-handles\.ts/.test(l));
  const own = outsideNode.find((l) => !l.includes('node_modules')) ?? outsideNode[0] ?? stack[0] ?? '';
  return own.trim().replace(/^at /, '');
}

function track(timer: Timer): Timer {
  if (created.size > 5_000) for (const t of created.keys()) if (!live(t)) created.delete(t);
  created.set(timer, creationSite());
  return timer;
}

/**
 * Wraps the global setTimeout and setInterval so the timers created from now on can be
 * listed (timers of `node:timers/promises` are not seen). Call once, before the file runs.
 */
export function trackTimers(): void {
  const { setTimeout: realTimeout, setInterval: realInterval } = globalThis;
  const timeout = (...args: Parameters<typeof realTimeout>): Timer => track(realTimeout(...args));
  const interval = (...args: Parameters<typeof realInterval>): Timer => track(realInterval(...args));
  globalThis.setTimeout = Object.assign(timeout, realTimeout);
  globalThis.setInterval = Object.assign(interval, realInterval);
}

/** The timers created since trackTimers() still pending and holding the process, by creation site. */
export function pendingTimers(): string[] {
  return [...created].filter(([t]) => live(t)).map(([, site]) => `pending timer created at ${site}`);
}
