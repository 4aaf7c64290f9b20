/**
 * `worker` with a Redis it never reached: it says so in one line and exits 1 within
 * seconds, not after ROWBRIDGE_REDIS_WAIT_MS (that wait is for an outage after it was
 * connected: run-redis-restart.test.ts). A Redis that comes up while it starts is
 * waited for.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeRedis, waitForFirstRedis } from '../../src/cli/redis-reachable.ts';

const CLI = path.resolve(import.meta.dirname, '../../src/cli.ts');
/** Far longer than a worker may take to give up on a Redis it never reached. */
const WAIT_MS = 120_000;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('worker with a Redis it never reached', () => {
  let dir: string;
  const children: ChildProcess[] = [];

  function worker(port: number, args: string[] = []) {
    const child = spawn(process.execPath, [CLI, 'worker', ...args], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        REDIS_URL: `redis://127.0.0.1:${port}`,
        ROWBRIDGE_REDIS_WAIT_MS: String(WAIT_MS),
        ROWBRIDGE_QUEUE_PREFIX: `rbtest-first-reach-${process.pid}`,
        ROWBRIDGE_JOBS_DIR: dir,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const started = performance.now();
    const exited = new Promise<{ code: number | null; ms: number }>((resolve) =>
      child.once('exit', (code) => resolve({ code, ms: performance.now() - started })),
    );
    return { child, exited, stdout: () => stdout, stderr: () => stderr };
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-first-reach-'));
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('says "cannot reach Redis" once and exits 1, long before ROWBRIDGE_REDIS_WAIT_MS', async () => {
    const port = await freePort();
    for (const args of [[], ['--ops-port', String(await freePort())]]) {
      const w = worker(port, args);
      const { code, ms } = await w.exited;
      expect(code, w.stderr()).toBe(1);
      expect(w.stderr()).toBe(`cannot reach Redis at 127.0.0.1:${port} (REDIS_URL): ECONNREFUSED\n`);
      expect(w.stdout()).toBe('');
      // It probes for 5 s; the rest is start-up on a busy machine. Before, it waited WAIT_MS.
      expect(ms).toBeLessThan(WAIT_MS / 4);
    }
  }, 90_000);

  it('waits for a Redis that comes up while it starts (the probe the worker makes)', async () => {
    const port = await freePort();
    const started = performance.now();
    // Nothing listens when the first probe is made; Redis starts a second later.
    const waiting = waitForFirstRedis(`redis://127.0.0.1:${port}`, 30_000);
    await new Promise((r) => setTimeout(r, 1000));
    const redis = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    children.push(redis);
    try {
      await waiting;
      expect(performance.now() - started).toBeGreaterThan(1000);
      expect(await probeRedis(`redis://127.0.0.1:${port}`)).toBe('ok');
    } finally {
      redis.kill('SIGKILL');
    }
  }, 60_000);
});
