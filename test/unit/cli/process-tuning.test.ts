import { execFile, spawn, spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { readSetting } from '../../../config/settings.ts';

const root = path.resolve(import.meta.dirname, '../../..');

/** The largest young generation (MB) a churning child reached in `mode`, with `flags`. */
async function largestYoungGeneration(mode: 'lean' | 'fast', flags: string[] = []): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, [
    ...flags,
    path.join(root, 'test/fixtures/memory/young-generation-churn.ts'),
    path.join(root, 'src/cli/process-tuning.ts'),
    mode,
  ]);
  return (JSON.parse(stdout) as { youngMb: number }).youngMb;
}

describe('ROWBRIDGE_MEMORY', () => {
  it('is read through the settings: lean (the default) or fast, anything else refused naming both', () => {
    expect(readSetting('memory', { ROWBRIDGE_MEMORY: 'lean' })).toBe('lean');
    expect(readSetting('memory', { ROWBRIDGE_MEMORY: ' FAST ' })).toBe('fast');
    expect(readSetting('memory', {})).toBe('lean');
    expect(readSetting('memory', { ROWBRIDGE_MEMORY: '' })).toBe('lean');
    expect(() => readSetting('memory', { ROWBRIDGE_MEMORY: 'small' })).toThrow(
      /ROWBRIDGE_MEMORY must be lean or fast, got "small": lean \(the default\) bounds the heap/,
    );
  });

  it('a bad value stops the command before it starts, with exit code 64', () => {
    const run = spawnSync(process.execPath, [path.join(root, 'bin/rowbridge.js'), 'status'], {
      env: { ...process.env, ROWBRIDGE_MEMORY: 'tiny' },
      encoding: 'utf8',
    });
    expect(run.status).toBe(64);
    expect(run.stderr).toContain('ROWBRIDGE_MEMORY must be lean or fast, got "tiny"');
  });

  it('no command starts itself again: a lean process keeps the environment it was given', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, ROWBRIDGE_MEMORY: 'lean' };
    for (const name of ['MALLOC_ARENA_MAX', 'MALLOC_TRIM_THRESHOLD_', 'MALLOC_MMAP_THRESHOLD_'])
      delete env[name];
    // The emulator command stays up without Redis; its environment is read from /proc.
    const child = spawn(process.execPath, [path.join(root, 'bin/rowbridge.js'), 'emulator', '--port', '0'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.once('data', () => resolve());
        child.once('exit', (code) => reject(new Error(`emulator exited ${String(code)}`)));
      });
      const environ = await readFile(`/proc/${child.pid}/environ`, 'utf8');
      expect(environ.split('\0')).toContain('ROWBRIDGE_MEMORY=lean');
      expect(environ).not.toContain('MALLOC_ARENA_MAX');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('lean never lets the young generation past 2 x 16 MB; with room given, V8 alone grows it past', async () => {
    // V8's own ceiling depends on the machine's memory: the fast run is given a ceiling
    // of 2 x 64 MB, so that it can outgrow the lean cap on any machine.
    const [lean, fast] = await Promise.all([
      largestYoungGeneration('lean'),
      largestYoungGeneration('fast', ['--max-semi-space-size=64']),
    ]);
    // Capped: 32 MB, and a few MB more for a moment while a scavenge moves pages.
    expect(lean).toBeLessThan(44);
    expect(fast).toBeGreaterThan(44);
  });
});
