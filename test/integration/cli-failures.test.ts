import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from 'node:net';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const CLI = path.resolve(import.meta.dirname, '../../src/cli.ts');

function cli(args: string[], env: NodeJS.ProcessEnv, terminal = false) {
  const command = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const [file, argv] = terminal
    ? ['script', ['-qec', command, '/dev/null']]
    : [process.execPath, [CLI, ...args]];
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(file, argv, {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A port below 1024 nothing listens on (the OS never hands those out to other tests). */
async function closedPort(): Promise<number> {
  for (const port of [9, 13, 17, 19, 37, 47, 79, 113, 119, 179, 389]) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (!open) return port;
  }
  throw new Error('no closed port below 1024 on 127.0.0.1');
}

describe('run with a Redis that never answered', () => {
  it('fails within 5 s with the one "cannot reach Redis" line; nothing called resumable', async () => {
    const port = await closedPort();
    const started = performance.now();
    const r = await cli(['run', 'orders'], { REDIS_URL: `redis://127.0.0.1:${port}` });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`cannot reach Redis at 127.0.0.1:${port} (REDIS_URL): ECONNREFUSED\n`);
  }, 150_000);
});

describe('a failed run on a terminal', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness('cli-failures');
    await h.writeFile('parts.csv', 'code,qty\nP-1,1\nP-2,2\nP-3,3\n');
    await h.writeJob(
      'parts',
      `name: parts
source: { type: csv, path: ./parts.csv }
target: { worksheet: nosuch, mode: upsert, key: code, batchSize: 2 }
fields: { code: code, qty: qty }
`,
    );
  });
  afterAll(async () => {
    await h.close();
  });

  it('prints its error once, as one line with a hint naming the command as typed; no JSON', async () => {
    const r = await cli(['run', 'parts'], h.env, true);
    expect(r.code).toBe(1);
    const plain = stripVTControlCharacters(r.stdout);
    expect(plain.match(/worksheet nosuch does not exist/g)).toHaveLength(1);
    expect(plain).toMatch(/^run parts-\S+ \(parts\) failed: .*worksheet nosuch does not exist\r?$/m);
    expect(plain).toMatch(/^hint: fix the cause, then `node src\/cli\.ts run parts` /m);
    expect(plain).not.toMatch(/[{}]/);
  }, 60_000);

  it('a misspelt job name is answered with the job it most likely meant', async () => {
    const r = await cli(['run', 'prats'], h.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`no job spec prats.yaml in ${h.dir} (did you mean parts?)\n`);
  });

  it('failed before reading anything: not resumable, and the next run starts anew, not "resumed" with the old error', async () => {
    const [failed] = await h.rt.runs.list({ job: 'parts' });
    expect(failed!.status).toBe('failed');
    const status = await cli(['status', '--job', 'parts'], h.env);
    expect(status.stdout).toMatch(new RegExp(`^${failed!.runId}\\s+parts\\s+failed\\s`, 'm'));
    expect(status.stdout).not.toContain('resumable');

    h.createWorksheet({
      name: 'Nosuch',
      alias: 'nosuch',
      fields: [
        { name: 'Code', alias: 'code', type: '2', required: true, isTitle: true },
        { name: 'Qty', alias: 'qty', type: '6' },
      ],
    });
    const again = await cli(['run', 'parts', '--json'], h.env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('resuming');
    const { run, report } = JSON.parse(again.stdout) as {
      run: { runId: string; message?: string };
      report: { created: number; requests: number };
    };
    expect(run.runId).not.toBe(failed!.runId);
    expect(run.message).toBeUndefined();
    expect(report.created).toBe(3);
    expect((await h.rt.runs.get(failed!.runId))!.status).toBe('failed');
  }, 60_000);
});

describe('a job spec that is not valid YAML', () => {
  it('prints the first error only, with the lines around it and a caret; no secret shown', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-yaml-'));
    try {
      const file = path.join(dir, 'bad.yaml');
      await writeFile(
        file,
        'name: bad\nsource:\n  type: http\n  url: https://u:hunter2@x.example/a\n  password: s3cret\n   oops: x\ntarget: { worksheet: w\n',
      );
      const r = await cli(['validate', file], {});
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `${file}:5:13 is not valid YAML: Nested mappings are not allowed in compact mappings\n` +
          '  4 |   url: https://u:••••••@x.example/a\n' +
          '> 5 |   password: ••••••\n' +
          '    |             ^\n',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('run with a platform it cannot reach', () => {
  it('names the host, the port and ROWBRIDGE_API_URL, as check does; on a terminal once', async () => {
    const h = await createHarness('cli-host');
    try {
      await h.writeFile('parts.csv', 'code,qty\nP-1,1\n');
      await h.writeJob(
        'parts',
        `name: parts
source: { type: csv, path: ./parts.csv }
target: { worksheet: parts, mode: upsert, key: code }
fields: { code: code, qty: qty }
`,
      );
      const port = await closedPort();
      const env = { ...h.env, ROWBRIDGE_API_URL: `http://127.0.0.1:${port}`, ROWBRIDGE_RETRIES: '1' };
      const piped = await cli(['run', 'parts'], env);
      expect(piped.code).toBe(1);
      expect(piped.stdout).toMatch(
        new RegExp(
          `^run parts-\\S+ \\(parts\\): failed - cannot reach the platform at 127\\.0\\.0\\.1:${port} \\(ROWBRIDGE_API_URL\\): GET /v3/app/worksheets/parts: network failure .*ECONNREFUSED`,
        ),
      );
      const terminal = await cli(['run', 'parts'], env, true);
      const plain = stripVTControlCharacters(terminal.stdout);
      expect(plain).toMatch(
        new RegExp(
          `^run parts-\\S+ \\(parts\\) failed: cannot reach the platform at 127\\.0\\.0\\.1:${port} \\(ROWBRIDGE_API_URL\\)`,
          'm',
        ),
      );
      expect(plain.match(/ECONNREFUSED/g)).toHaveLength(1);
    } finally {
      await h.close();
    }
  }, 90_000);
});
