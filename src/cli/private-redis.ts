/**
 * The quickstart's private redis-server: when nothing answers at REDIS_URL and
 * `redis-server` is on PATH, `rowbridge start` runs a throwaway one on loopback for as
 * long as it runs, and never leaves it behind.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { probeRedis } from './redis-reachable.ts';

/** A redis-server this process started; it lives as long as the command. */
export interface PrivateRedis {
  url: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/** What to do when no Redis answers at `where` and there is no redis-server to start. */
export function noRedisMessage(where: string): string {
  return [
    `rowbridge start needs Redis, and nothing answers at ${where} (REDIS_URL).`,
    'redis-server is not on PATH either, so the quickstart cannot start a private one. Do one of:',
    '  sudo apt-get install redis-server     (Debian, Ubuntu; then run npm start again)',
    '  brew install redis                    (macOS)',
    '  docker run -d -p 6379:6379 redis:7    (any machine with Docker)',
    '  REDIS_URL=redis://HOST:PORT npm start (a Redis you already have)',
  ].join('\n');
}

/** The executable `name` in a folder of PATH, if any. */
export function findOnPath(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A throwaway redis-server on loopback: no persistence, data in a temporary folder. */
export async function startPrivateRedis(binary: string): Promise<PrivateRedis> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-redis-'));
  const port = await freePort();
  const child: ChildProcess = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Never leave the server behind: not on an uncaught error (exit), not when only this
  // process is signalled (Ctrl-C reaches the whole process group, `kill PID` does not).
  const onExit = () => child.kill('SIGKILL');
  const onSignal = (signal: NodeJS.Signals) => {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('exit', onExit);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const stop = async () => {
    process.removeListener('exit', onExit);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const url = `redis://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 50; attempt++) {
    if (child.exitCode !== null) break;
    if ((await probeRedis(url, 2000)) === 'ok') return { url, port, pid: child.pid!, stop };
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(
    `the private redis-server (${binary}) did not start on 127.0.0.1:${port}:\n${output.trim()}`,
  );
}
