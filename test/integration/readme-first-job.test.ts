/**
 * README, "A first job of your own", walked as written against the
 * emulator: its seed, the example job and its data file copied into jobs/, then
 * validate, plan and run by name.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteKeys, REDIS_URL } from '../helpers/sync-harness.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CLI = path.join(ROOT, 'src/cli.ts');
const PREFIX = `rbtest-first-job-${process.pid}`;

/** A command in `cwd` with `env`: exit code and output. */
function cli(args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('README: a first job of your own against the emulator', { timeout: 120_000 }, () => {
  let dir: string;
  let emulator: ChildProcess;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    REDIS_URL,
    ROWBRIDGE_QUEUE_PREFIX: PREFIX,
    ROWBRIDGE_LOG_LEVEL: 'warn',
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-first-job-'));
    // node src/cli.ts emulator --seed jobs/examples/orders-seed.json, and export what it prints.
    emulator = spawn(
      process.execPath,
      [CLI, 'emulator', '--seed', 'jobs/examples/orders-seed.json', '--port', '0'],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let printed = '';
    await new Promise<void>((resolve) => {
      emulator.stdout!.on('data', (c: Buffer) => {
        printed += c.toString();
        if (printed.includes('Stop with')) resolve();
      });
    });
    for (const [, name, value] of printed.matchAll(/export (\w+)=(\S+)/g)) env[name!] = value;
    // mkdir -p jobs/data && cp jobs/examples/orders.yaml jobs/ && cp jobs/examples/data/orders.csv jobs/data/
    await mkdir(path.join(dir, 'jobs/data'), { recursive: true });
    await copyFile(path.join(ROOT, 'jobs/examples/orders.yaml'), path.join(dir, 'jobs/orders.yaml'));
    await copyFile(path.join(ROOT, 'jobs/examples/data/orders.csv'), path.join(dir, 'jobs/data/orders.csv'));
  });

  afterAll(async () => {
    emulator?.kill('SIGTERM');
    await deleteKeys(`${PREFIX}:*`);
    await rm(dir, { recursive: true, force: true });
  });

  it('validate, plan and run orders work as written: every row lands', async () => {
    const validate = await cli(['validate', 'orders'], dir, env);
    expect(validate.code, validate.stderr).toBe(0);
    const plan = await cli(['plan', 'orders', '--json'], dir, env);
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({ create: 5, reject: 0 });
    const run = await cli(['run', 'orders', '--json'], dir, env);
    expect(run.code, run.stderr).toBe(0);
    const { report } = JSON.parse(run.stdout) as { report: { created: number; deadLetteredTotal: number } };
    expect(report).toMatchObject({ created: 5, deadLetteredTotal: 0 });
  });
});
