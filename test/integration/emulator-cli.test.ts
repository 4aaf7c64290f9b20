import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/emulator.ts';
import type { CliIo } from '../../src/cli/io.ts';

const ROOT = resolve(import.meta.dirname, '../..');
let dir: string;

function captureIo(): CliIo & { output: () => string } {
  let text = '';
  return {
    out: (t) => void (text += `${t}\n`),
    err: (t) => void (text += `${t}\n`),
    isTty: false,
    env: {},
    cwd: dir,
    output: () => text,
  };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rowbridge-emulator-cli-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('rowbridge emulator command', () => {
  it('serves the example seed, prints its URL and credentials, and stops on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      ['src/cli.ts', 'emulator', '--port', '0', '--seed', 'jobs/examples/emulator-seed.json'],
      { cwd: ROOT },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    const url = await new Promise<string>((done, fail) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const match = /listening on (http:\/\/[^\s]+)/.exec(stdout);
        if (match !== null && stdout.includes('Stop with Ctrl+C')) done(match[1]!);
      });
      child.once('exit', () => fail(new Error(`emulator exited early: ${stderr}`)));
    });
    try {
      // The lines to export, not header values: ROWBRIDGE_API_URL without /v3, the platform's prefix.
      expect(stdout).toContain(`export ROWBRIDGE_API_URL=${url}\n`);
      expect(stdout).toContain('export ROWBRIDGE_HEADER_PREFIX=HAP-');
      expect(stdout).toContain('export ROWBRIDGE_APPKEY=demo-crm-appkey');
      expect(stdout).toContain('platform dialect');
      expect(stdout).toContain('personal token for CRM: pat_demo_crm_token_0001');
      expect(stdout).toContain('worksheet "Contacts" id 65f0000000000000000000b2 alias contacts (2 rows)');
      const res = await fetch(`${url}/v3/app/worksheets/contacts/rows/list`, {
        method: 'POST',
        headers: {
          authorization: 'Bearer pat_demo_crm_token_0001',
          'HAP-Appid': '65f0000000000000000000a1',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ pageSize: 10, pageIndex: 1, includeTotalCount: true }),
      });
      const body = (await res.json()) as { data: { total: number } };
      expect(body.data.total).toBe(2);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(stderr).toContain('SIGTERM received');
  });

  it('rejects bad arguments with the usage exit code', async () => {
    const io = captureIo();
    expect(await main(['--port', 'eighty'], io)).toBe(64);
    expect(io.output()).toContain('--port must be an integer');
    expect(await main(['--row-shape', 'tree'], io)).toBe(64);
    expect(await main(['--dialect', 'klingon'], io)).toBe(64);
    expect(io.output()).toContain('--dialect must be "platform" or "spec"');
    expect(await main(['--colour'], io)).toBe(64);
  });

  it('names the seed file and every bad path in it', async () => {
    const file = join(dir, 'bad-seed.json');
    await writeFile(file, JSON.stringify({ apps: [{ name: 'X', appKey: '', sign: 's' }] }));
    const io = captureIo();
    expect(await main(['--port', '0', '--seed', 'bad-seed.json'], io)).toBe(1);
    expect(io.output()).toContain(file);
    expect(io.output()).toContain('apps.0.appKey');

    await writeFile(file, '{not json');
    const io2 = captureIo();
    expect(await main(['--port', '0', '--seed', 'bad-seed.json'], io2)).toBe(1);
    expect(io2.output()).toContain('is not valid JSON');

    const io3 = captureIo();
    expect(await main(['--port', '0', '--seed', 'missing.json'], io3)).toBe(1);
    expect(io3.output()).toContain('ENOENT');
  });
});
