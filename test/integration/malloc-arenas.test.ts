/**
 * `lean` starts itself again with glibc's malloc set (MALLOC_ARENA_MAX=2 and the two
 * thresholds, src/cli/malloc-arenas.ts): the worker a user starts has them in its
 * environment, in the same process (pid), and a value the user set, or `fast`, is left
 * alone.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { arenaRestart, LEAN_MALLOC_ENV, limitMallocArenas } from '../../src/cli/malloc-arenas.ts';
import { killChildren, until } from '../helpers/cli-process.ts';
import { deleteKeys, REDIS_URL } from '../helpers/sync-harness.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/rowbridge.js');
const PREFIX = `rbtest-arenas-${process.pid}`;
const NAMES = Object.keys(LEAN_MALLOC_ENV);
const children: ChildProcess[] = [];
afterEach(() => killChildren(children));
afterAll(() => deleteKeys(`${PREFIX}*`));

/** The malloc variables as the started worker's process has them (absent: not set). */
async function workerMalloc(env: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  const base = { ...process.env };
  for (const name of [...NAMES, 'ROWBRIDGE_MEMORY']) delete base[name];
  const child = spawn(process.execPath, [BIN, 'worker', '--no-schedules', '--concurrency', '1'], {
    env: {
      ...base,
      REDIS_URL,
      ROWBRIDGE_QUEUE_PREFIX: PREFIX,
      ROWBRIDGE_LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  await until(() => out.includes('worker started') || child.exitCode !== null, 30_000, 'the worker to start');
  expect(out).toContain('worker started');
  // The process spawned is the one running: started again in place, not as a child.
  const environ = await readFile(`/proc/${child.pid}/environ`, 'utf8');
  const found: Record<string, string> = {};
  for (const entry of environ.split('\0')) {
    const at = entry.indexOf('=');
    if (NAMES.includes(entry.slice(0, at))) found[entry.slice(0, at)] = entry.slice(at + 1);
  }
  return found;
}

describe.skipIf(process.platform !== 'linux')('lean and glibc malloc', () => {
  it('a lean worker (the default) runs with two arenas and 128 KB thresholds; fast, or a value of the user, is left as it is', async () => {
    const [lean, unset, fast, own] = await Promise.all([
      workerMalloc({ ROWBRIDGE_MEMORY: 'lean' }),
      workerMalloc({}),
      workerMalloc({ ROWBRIDGE_MEMORY: 'fast' }),
      workerMalloc({ ROWBRIDGE_MEMORY: 'lean', MALLOC_ARENA_MAX: '4' }),
    ]);
    const set = { MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '131072', MALLOC_MMAP_THRESHOLD_: '131072' };
    expect({ lean, unset, fast, own }).toEqual({
      lean: set,
      unset: set,
      fast: {},
      own: { ...set, MALLOC_ARENA_MAX: '4' },
    });
  });

  it('starts again only on Linux, with a variable unset, where Node can, and not under a debugger', () => {
    expect(arenaRestart({}, 'linux', true)).toMatchObject({
      file: process.execPath,
      args: [process.execPath, ...process.execArgv, ...process.argv.slice(1)],
      env: LEAN_MALLOC_ENV,
    });
    expect(arenaRestart({}, 'darwin', true)).toBeUndefined();
    expect(arenaRestart({ ...LEAN_MALLOC_ENV, MALLOC_ARENA_MAX: '8' }, 'linux', true)).toBeUndefined();
    expect(arenaRestart({ MALLOC_ARENA_MAX: '8' }, 'linux', true)?.env).toEqual({
      ...LEAN_MALLOC_ENV,
      MALLOC_ARENA_MAX: '8',
    });
    expect(arenaRestart({}, 'linux', false)).toBeUndefined();
    // A debugger: --inspect-brk would stop at the first line twice.
    expect(arenaRestart({}, 'linux', true, ['--inspect-brk=0'])).toBeUndefined();
    expect(arenaRestart({ NODE_OPTIONS: '--inspect' }, 'linux', true, [])).toBeUndefined();
    expect(arenaRestart({}, 'linux', true, ['--stack-size=2000'])?.args).toEqual([
      process.execPath,
      '--stack-size=2000',
      ...process.argv.slice(1),
    ]);
  });

  it('a restart that fails leaves the command to run as it is', () => {
    const saved = Object.fromEntries(NAMES.map((name) => [name, process.env[name]]));
    for (const name of NAMES) delete process.env[name];
    // Stubbed: the real one would replace this test process.
    const execve = vi.spyOn(process, 'execve').mockImplementation(() => {
      throw new Error('EACCES');
    });
    try {
      expect(() => limitMallocArenas()).not.toThrow();
      expect(execve).toHaveBeenCalledWith(
        process.execPath,
        expect.any(Array),
        expect.objectContaining(LEAN_MALLOC_ENV),
      );
    } finally {
      execve.mockRestore();
      for (const [name, value] of Object.entries(saved)) if (value !== undefined) process.env[name] = value;
    }
  });
});
