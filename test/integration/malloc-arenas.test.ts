/**
 * `lean` starts itself again with MALLOC_ARENA_MAX=2 (src/cli/malloc-arenas.ts): the
 * worker a user starts has it in its environment, in the same process (pid), and a
 * value the user set, or `fast`, is left alone.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { arenaRestart, limitMallocArenas } from '../../src/cli/malloc-arenas.ts';
import { killChildren, until } from '../helpers/cli-process.ts';
import { deleteKeys, REDIS_URL } from '../helpers/sync-harness.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/rowbridge.js');
const PREFIX = `rbtest-arenas-${process.pid}`;
const children: ChildProcess[] = [];
afterEach(() => killChildren(children));
afterAll(() => deleteKeys(`${PREFIX}*`));

/** MALLOC_ARENA_MAX as the started worker's process has it (undefined: not set). */
async function workerArenas(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const base = { ...process.env };
  delete base.MALLOC_ARENA_MAX;
  delete base.ROWBRIDGE_MEMORY;
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
  const entry = environ.split('\0').find((e) => e.startsWith('MALLOC_ARENA_MAX='));
  return entry?.slice('MALLOC_ARENA_MAX='.length);
}

describe.skipIf(process.platform !== 'linux')('lean and malloc arenas', () => {
  it('a lean worker (the default) runs with two arenas; fast, or a value of the user, is left as it is', async () => {
    const [lean, unset, fast, own] = await Promise.all([
      workerArenas({ ROWBRIDGE_MEMORY: 'lean' }),
      workerArenas({}),
      workerArenas({ ROWBRIDGE_MEMORY: 'fast' }),
      workerArenas({ ROWBRIDGE_MEMORY: 'lean', MALLOC_ARENA_MAX: '4' }),
    ]);
    expect({ lean, unset, fast, own }).toEqual({ lean: '2', unset: '2', fast: undefined, own: '4' });
  });

  it('starts again only on Linux, with the variable unset, where Node can', () => {
    expect(arenaRestart({}, 'linux', true)).toMatchObject({
      file: process.execPath,
      args: [process.execPath, ...process.execArgv, ...process.argv.slice(1)],
      env: { MALLOC_ARENA_MAX: '2' },
    });
    expect(arenaRestart({}, 'darwin', true)).toBeUndefined();
    expect(arenaRestart({ MALLOC_ARENA_MAX: '8' }, 'linux', true)).toBeUndefined();
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
    const saved = process.env.MALLOC_ARENA_MAX;
    delete process.env.MALLOC_ARENA_MAX;
    // Stubbed: the real one would replace this test process.
    const execve = vi.spyOn(process, 'execve').mockImplementation(() => {
      throw new Error('EACCES');
    });
    try {
      expect(() => limitMallocArenas()).not.toThrow();
      expect(execve).toHaveBeenCalledWith(
        process.execPath,
        expect.any(Array),
        expect.objectContaining({ MALLOC_ARENA_MAX: '2' }),
      );
    } finally {
      execve.mockRestore();
      if (saved !== undefined) process.env.MALLOC_ARENA_MAX = saved;
    }
  });
});
