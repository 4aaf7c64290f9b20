import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/rowbridge.js', import.meta.url));

/** A long-running rowbridge command (`worker`, `hooks serve`) started as a user starts it. */
export interface RowbridgeService {
  readonly pid: number;
  /** The last 4,000 characters it printed (stdout and stderr), for error messages. */
  tail(): string;
  /** SIGTERM, then waits for it to exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `node bin/rowbridge.js ...args` with `env` and resolves once it has printed
 * `readyText` (e.g. `worker started`); rejects when it exits first or after `timeoutMs`.
 * Its output is read all along (a full pipe would stall it) and kept only as a tail.
 */
export async function startRowbridgeService(options: {
  env: NodeJS.ProcessEnv;
  args: string[];
  readyText: string;
  timeoutMs?: number;
}): Promise<RowbridgeService> {
  const child = spawn(process.execPath, [BIN, ...options.args], {
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let seen = '';
  const name = `rowbridge ${options.args.join(' ')}`;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `${name} did not print "${options.readyText}" within ${options.timeoutMs ?? 30_000} ms:\n${seen}`,
        ),
      );
    }, options.timeoutMs ?? 30_000);
    const look = (chunk: Buffer) => {
      seen = (seen + chunk.toString()).slice(-4000);
      if (process.env.BENCH_VERBOSE === '1') process.stderr.write(chunk);
      if (seen.includes(options.readyText)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${String(code)}) before it was ready:\n${seen}`));
    });
  });
  return { pid: child.pid!, tail: () => seen, stop: (graceMs = 15_000) => stopChild(child, graceMs) };
}

async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** A TCP port free on 127.0.0.1 a moment ago (for `--ops-port` / `--port`). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no TCP port was given');
  return address.port;
}
