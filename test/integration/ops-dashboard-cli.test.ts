import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/dashboard.ts';
import type { CliIo } from '../../src/cli/io.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Runs `dashboard` in a child process, as `node src/cli.ts dashboard` will once it is registered. */
const CHILD = `
const { main } = await import(${JSON.stringify(path.join(ROOT, 'src/cli/dashboard.ts'))});
const { createCliIo } = await import(${JSON.stringify(path.join(ROOT, 'src/cli/io.ts'))});
process.exitCode = await main(process.argv.slice(1), createCliIo());
`;

function captureIo(env: NodeJS.ProcessEnv): CliIo & { errText(): string } {
  let err = '';
  return {
    out: () => undefined,
    err: (text) => {
      err += text;
    },
    isTty: false,
    env: { ...env, ROWBRIDGE_LOG_LEVEL: 'warn' },
    cwd: ROOT,
    errText: () => err,
  };
}

describe('rowbridge dashboard', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await createHarness('ops-dashboard-cli');
  });
  afterAll(async () => {
    await h.close();
  });

  it('serves the pages, bull-board and the probes until SIGTERM, then exits 0', async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, '--', '--port', '0'], {
      cwd: ROOT,
      env: { ...h.env, PATH: process.env.PATH, ROWBRIDGE_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const found = /rowbridge dashboard on (http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
          if (found?.[1] !== undefined) resolve(found[1]);
        });
        void exited.then(() => reject(new Error(`dashboard exited before serving: ${stderr}`)));
      });
      const home = await fetch(`${url}/`);
      expect(home.status).toBe(200);
      expect(await home.text()).toContain('No runs yet.');
      expect((await fetch(`${url}/queues`)).status).toBe(200);
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok', api: { target: h.emulator.url } });
      expect(await (await fetch(`${url}/metrics`)).text()).toMatch(
        /^rowbridge_queue_jobs\{queue="runs",state="waiting"\} 0$/m,
      );
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = await exited;
    expect(stderr).not.toMatch(/error/i);
    expect(code).toBe(0);
  });

  it('refuses a bad port with exit 64 and the usage', async () => {
    const io = captureIo(h.env);
    expect(await main(['--port', 'eighty'], io)).toBe(64);
    expect(io.errText()).toMatch(/--port must be a port number from 0 to 65535, got "eighty"/);
    expect(io.errText()).toContain('usage: rowbridge dashboard [--port N] [--host H] [--allow-writes]');
  });

  it('names the address when the port is taken, exit 1, and stops listening for signals', async () => {
    const first = captureIo(h.env);
    const { createServer } = await import('node:net');
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    const listeners = process.listenerCount('SIGTERM');
    try {
      expect(await main(['--port', String(port)], first)).toBe(1);
      expect(first.errText()).toContain(`cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
      // A listener left behind would swallow the next SIGTERM of the whole process.
      expect(process.listenerCount('SIGTERM')).toBe(listeners);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});
