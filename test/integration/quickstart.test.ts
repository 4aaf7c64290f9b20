import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { deleteKeys, REDIS_URL } from '../helpers/sync-harness.ts';

/** `npm start` as a newcomer runs it, minus npm: a child process with CI=true and no TTY. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = path.join(ROOT, 'src/cli.ts');
const BAD_ROWS = JSON.parse(
  readFileSync(path.join(ROOT, 'jobs/examples/quickstart/bad-rows.json'), 'utf8'),
) as Array<{
  line: number;
  field: string;
}>;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function start(env: NodeJS.ProcessEnv): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'start'], {
      cwd: ROOT,
      env: { HOME: process.env.HOME, CI: 'true', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (stderr.includes('unknown command "start"'))
        reject(new Error('src/cli/commands.ts does not register `start` (src/cli/start.ts)'));
      else resolve({ code, stdout, stderr });
    });
  });
}

/** Whether something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A port nothing answers on. Below 1024, because the OS never hands those out as
 * ephemeral ports: a port freed by listen(0) could be taken by another test's server
 * (an emulator) before the quickstart tries it, which once made it "answer" as HTTP.
 */
async function freePort(): Promise<number> {
  for (const port of [9, 13, 17, 19, 37, 47, 79, 113, 119, 179, 389, 427, 444, 515, 543, 631, 873, 992]) {
    if (!(await listening(port))) return port;
  }
  throw new Error('no closed port below 1024 found on 127.0.0.1');
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function answersPing(port: number): Promise<boolean> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** What every successful quickstart prints: the report and the five bad rows with their reasons. */
function expectDemoOutput(out: string): void {
  expect(out).toMatch(/run orders-\S+ \(orders\): completed/);
  expect(out).toMatch(/^ {2}read {10}3000$/m);
  expect(out).toMatch(/^ {2}created {7}2995$/m);
  expect(out).toMatch(/^ {2}dead-lettered 5 \(invalid-row 5\)$/m);
  for (const bad of BAD_ROWS)
    expect(out).toMatch(new RegExp(`^ {2}line ${bad.line} +${bad.field} +${bad.field} \\(column`, 'm'));
  expect(out).toContain('got "n/a"');
  expect(out).toContain('no option "Backordered"');
  expect(out).toContain('got "2025-02-30"');
  expect(out).toContain('required: the field must have a value');
  expect(out).toContain('got "accounts@"');
  expect(out).toContain('The quickstart worked.');
}

describe('npm start (rowbridge start)', () => {
  it('runs the demo on the Redis at REDIS_URL, exits 0, and says how to list the dead letters again', async () => {
    const result = await start({ PATH: process.env.PATH, REDIS_URL });
    const prefix = /^ {2}prefix {4}(\{rowbridge-quickstart-[0-9a-f-]+\})$/m.exec(result.stdout)?.[1];
    try {
      expect(result.stderr).not.toMatch(/error/i);
      expect(result.code).toBe(0);
      expectDemoOutput(result.stdout);
      const runId = /Dead letters of run (\S+): 5/.exec(result.stdout)?.[1];
      expect(runId).toBeDefined();
      expect(result.stdout).toContain(
        `ROWBRIDGE_QUEUE_PREFIX='${prefix}' node src/cli.ts dlq list --run ${runId}`,
      );
      // It ends with the command that shows the run on the dashboard's jobs page.
      expect(result.stdout.trimEnd().split('\n').slice(-2)).toEqual([
        `  ROWBRIDGE_QUEUE_PREFIX='${prefix}' node src/cli.ts dashboard`,
        '  then open http://127.0.0.1:3000/jobs',
      ]);
      // The cleanup hint keeps the host and database of REDIS_URL, without printing it.
      expect(result.stdout).toContain(
        `redis-cli -u "$REDIS_URL" --scan --pattern '${prefix}:*' | xargs redis-cli -u "$REDIS_URL" del`,
      );
      // The dead letters are still in Redis for that command to find.
      const redis = new Redis(REDIS_URL);
      try {
        expect(await redis.zcard(`${prefix}:rb:dlq:run:${runId}`)).toBe(5);
      } finally {
        redis.disconnect();
      }
    } finally {
      if (prefix !== undefined) await deleteKeys(`${prefix}:*`);
    }
  }, 120_000);

  it('starts a private redis-server when nothing answers, and leaves none behind', async () => {
    const nobody = await freePort();
    const result = await start({ PATH: process.env.PATH, REDIS_URL: `redis://127.0.0.1:${nobody}` });
    expect(result.code).toBe(0);
    const started =
      /private redis-server on 127\.0\.0\.1:(\d+) \(pid (\d+); nothing answered at 127\.0\.0\.1:(\d+)\)/.exec(
        result.stdout,
      );
    expect(started?.[3]).toBe(String(nobody));
    expectDemoOutput(result.stdout);
    expect(result.stdout).toContain('the list above is all that is left');
    expect(result.stdout).not.toContain('dlq list --run');
    expect(result.stdout).toContain('(node src/cli.ts dashboard, then http://127.0.0.1:3000/jobs)');
    const [port, pid] = [Number(started?.[1]), Number(started?.[2])];
    expect(isRunning(pid)).toBe(false);
    expect(await answersPing(port)).toBe(false);
  }, 120_000);

  it('says what to install when no Redis answers and redis-server is not on PATH', async () => {
    const nobody = await freePort();
    const result = await start({ PATH: '/nonexistent', REDIS_URL: `redis://:topsecret@127.0.0.1:${nobody}` });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`nothing answers at 127.0.0.1:${nobody} (REDIS_URL)`);
    expect(result.stderr).toContain('sudo apt-get install redis-server');
    expect(result.stderr).toContain('REDIS_URL=redis://HOST:PORT npm start');
    expect(result.stderr + result.stdout).not.toContain('topsecret');
  }, 60_000);
});
