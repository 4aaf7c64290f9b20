/**
 * Redis dies under a running `run` and comes back from its append-only file: the same
 * command carries on and the run lands every row exactly once. Redis that stays away
 * past ROWBRIDGE_REDIS_WAIT_MS: `run` says so and exits 1, the run resumable. Each test
 * runs its own redis-server on its own port and kills that one by its pid.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { killChildren, spawnCli, until, writeLedgerJob } from '../helpers/cli-process.ts';
import type { CliProcess } from '../helpers/cli-process.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A private redis-server persisting every write to its AOF before answering. */
async function privateRedis(dir: string, port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--save',
      '',
    ],
    { stdio: 'ignore' },
  );
  const probe = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  await until(
    async () => {
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG';
      } catch {
        return false;
      }
    },
    20_000,
    `redis-server on ${port}`,
  );
  probe.disconnect();
  return child;
}

describe('run survives a Redis restart', { timeout: 180_000 }, () => {
  let h: Harness | undefined;
  let dir: string | undefined;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    killChildren(children);
    await h?.close().catch(() => undefined);
    h = undefined;
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  async function setUp(rows: number): Promise<{ ws: string; port: number; redisUrl: string }> {
    dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-redis-restart-'));
    const port = await freePort();
    children.push(await privateRedis(dir, port));
    const redisUrl = `redis://127.0.0.1:${port}`;
    // A short lock: jobs the restart left active are taken again within seconds.
    h = await createHarness(
      'redis-restart',
      { faults: { seed: 9, latencyMs: [10, 25] } },
      { REDIS_URL: redisUrl, ROWBRIDGE_LOCK_DURATION_MS: '4000' },
    );
    const ws = await writeLedgerJob(h, rows, 'upsert');
    return { ws, port, redisUrl };
  }

  function run(env: NodeJS.ProcessEnv): CliProcess {
    return spawnCli(h!, children, ['run', 'ledger'], env);
  }

  it('Redis SIGKILLed at 40% and restarted from its AOF: the same run completes, every row once', async () => {
    const { ws, port } = await setUp(2500);
    const cmd = run({});
    await until(() => h!.emulator.state.rowCount(ws) >= 1000, 90_000, '40% of the rows');
    const redis = children[0]!;
    redis.kill('SIGKILL');
    await new Promise((r) => redis.once('exit', r));
    await new Promise((r) => setTimeout(r, 3_000));
    children.push(await privateRedis(dir!, port));

    const { code, stderr } = await cmd.exited;
    expect(code, stderr).toBe(0);
    expect(stderr).toMatch(/waiting for Redis at 127\.0\.0\.1:\d+ \(REDIS_URL\)/);
    expect(stderr).not.toMatch(/\n\s+at /);
    // Nor inside the JSON log lines: an outage is said, not dumped.
    expect(stderr).not.toMatch(/"stack":"[^"]/);
    const keys = h!.emulator.state.rows(ws).map((r) => String(r.values.entry));
    expect(keys).toHaveLength(2500);
    expect(new Set(keys).size).toBe(2500);
  });

  it('Redis gone for longer than ROWBRIDGE_REDIS_WAIT_MS: run says so and exits 1; the run resumes later', async () => {
    const { ws, port } = await setUp(2500);
    const cmd = run({ ROWBRIDGE_REDIS_WAIT_MS: '3000' });
    await until(() => h!.emulator.state.rowCount(ws) >= 500, 90_000, 'the first rows');
    const redis = children[0]!;
    redis.kill('SIGKILL');
    const killedAt = performance.now();
    const { code, stderr } = await cmd.exited;
    expect(code, stderr).toBe(1);
    expect(stderr).toMatch(/Redis at 127\.0\.0\.1:\d+ \(REDIS_URL\) did not come back within 3000 ms/);
    // The wait, then a few seconds to give up: not the 30 s meant for finishing batches.
    expect(performance.now() - killedAt).toBeLessThan(3_000 + 15_000);
    expect(stderr).not.toMatch(/\n\s+at /);
    // Nor inside the JSON log lines: an outage is said, not dumped.
    expect(stderr).not.toMatch(/"stack":"[^"]/);

    children.push(await privateRedis(dir!, port));
    const again = await run({}).exited;
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/resuming run/);
    const keys = h!.emulator.state.rows(ws).map((r) => String(r.values.entry));
    expect(keys).toHaveLength(2500);
    expect(new Set(keys).size).toBe(2500);
  });
});
