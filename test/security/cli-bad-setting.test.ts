/**
 * A bad setting must stop a command with one line naming the variable and what is
 * allowed, never with a stack trace: a trace tells whoever reads the container log the
 * code's layout, and buries the one thing the operator must change. `ROWBRIDGE_RETRIES=0`
 * stopped `rowbridge worker` with the ConfigError's stack (issue 22).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const CLI = path.resolve(import.meta.dirname, '../../src/cli.ts');

function rowbridge(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      // Redis on a closed port: the command must stop at the settings, before any connection.
      env: { ...process.env, REDIS_URL: 'redis://127.0.0.1:1', ROWBRIDGE_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe('a bad setting', () => {
  it.each([
    ['worker', ['worker']],
    ['worker --ops-port 0 --dashboard', ['worker', '--ops-port', '0', '--dashboard']],
    ['dashboard', ['dashboard', '--port', '0']],
    ['status', ['status']],
  ])(
    'ROWBRIDGE_RETRIES=0 stops %s with a configuration error, not a stack',
    async (_name, args) => {
      const { code, stderr } = await rowbridge(args, { ROWBRIDGE_RETRIES: '0' });
      expect(code).not.toBe(0);
      expect(code).not.toBeNull();
      expect(stderr).toContain('ROWBRIDGE_RETRIES must be a whole number of at least 1, got "0"');
      expect(stderr).not.toMatch(/^\s+at /m);
      expect(stderr).not.toMatch(/ConfigError|\.ts:\d+/);
    },
    30_000,
  );
});
