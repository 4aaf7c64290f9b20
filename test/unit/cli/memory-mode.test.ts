import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { memoryMode } from '../../../src/cli/memory-mode.ts';

const root = path.resolve(import.meta.dirname, '../../..');

async function largestYoungGeneration(cap: boolean): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, [
    path.join(root, 'test/fixtures/memory/young-generation-churn.ts'),
    path.join(root, 'src/cli/young-generation.ts'),
    cap ? 'cap' : 'none',
  ]);
  return (JSON.parse(stdout) as { youngMb: number }).youngMb;
}

describe('ROWBRIDGE_MEMORY', () => {
  it('reads lean (the default) and fast, and refuses anything else naming both and what they do', () => {
    expect(memoryMode({ ROWBRIDGE_MEMORY: 'lean' })).toBe('lean');
    expect(memoryMode({ ROWBRIDGE_MEMORY: ' FAST ' })).toBe('fast');
    // Unset or empty: lean.
    expect(memoryMode({})).toBe('lean');
    expect(memoryMode({ ROWBRIDGE_MEMORY: ' ' })).toBe('lean');
    expect(() => memoryMode({ ROWBRIDGE_MEMORY: 'small' })).toThrow(
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

  it('lean keeps the young generation at 2 x 16 MB where V8 alone grows it past', async () => {
    const [capped, free] = await Promise.all([largestYoungGeneration(true), largestYoungGeneration(false)]);
    // Capped: 32 MB, and a few MB more for a moment while a scavenge moves pages.
    expect(capped).toBeLessThan(44);
    expect(free).toBeGreaterThan(60);
  });
});
