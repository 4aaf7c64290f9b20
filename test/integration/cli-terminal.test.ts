import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commands } from '../../src/cli/commands.ts';
import { captureIo } from '../helpers/capture-io.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const CLI = path.resolve(import.meta.dirname, '../../src/cli.ts');

/**
 * A port nothing listens on, below 1024: the OS never hands those out as ephemeral
 * ports, so no other test's server can take it meanwhile.
 */
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

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The real CLI in a child process; with `terminal` under script(1), so stdout and stderr are a pty. */
function cli(args: string[], env: NodeJS.ProcessEnv, terminal = false): Promise<Result> {
  const command = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const [file, argv] = terminal
    ? ['script', ['-qec', command, '/dev/null']]
    : [process.execPath, [CLI, ...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('every command answers --help with its options', () => {
  /** One option each command must list (its most used one). */
  const OPTION: Record<string, string> = {
    validate: '--json',
    check: '--json',
    plan: '--json',
    run: '--concurrency N',
    enqueue: '--from X',
    cancel: '--abandon',
    worker: '--ops-port N',
    status: '--limit N',
    dlq: 'dlq list [--category C]',
    dashboard: '--allow-writes',
    emulator: '--seed FILE',
    conflicts: 'conflicts resolve ID --take source|worksheet|VALUE',
    deletes: 'deletes approve JOB [ID...]',
    links: 'links export JOB [--csv]',
    hooks: 'hooks show JOB [--url BASE]',
    cdc: 'cdc status JOB [--json]',
    singer: '--chunk-rows N',
    notify: '--help',
    start: '-h, --help',
  };

  it.each(Object.keys(commands))('%s --help exits 0 and prints its usage and options', async (name) => {
    const io = captureIo({});
    const command = await commands[name]!();
    expect(await command.main(['--help'], io)).toBe(0);
    const text = io.stdout.join('\n');
    expect(text).toContain(`usage: rowbridge ${name}`);
    expect(text).toContain(OPTION[name]);
    expect(io.stderr).toEqual([]);
  });

  it('rowbridge help <command> is <command> --help; rowbridge --help lists the commands', async () => {
    const help = await cli(['help', 'run'], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: rowbridge run JOB ');
    expect(help.stdout).toContain('--concurrency N');
    const all = await cli(['--help'], {});
    expect(all.code).toBe(0);
    for (const name of Object.keys(commands)) expect(all.stdout).toContain(`\n  ${name}`);
    // Said with the command as it was run: here the entry file, not the installed bin.
    expect(all.stdout).toContain("node src/cli.ts <command> --help lists a command's options;");
  });

  it('a misuse exits 64 naming the option, with the synopsis and where the options are listed', async () => {
    const io = captureIo({});
    const plan = await commands.plan!();
    expect(await plan.main(['orders', '--jsn'], io)).toBe(64);
    expect(io.stderr.join('\n')).toBe(
      'rowbridge plan: unknown option --jsn (options: --json)\n' +
        'usage: rowbridge plan JOB [--json]\n' +
        '(rowbridge plan --help lists the options)',
    );
  });
});

describe('a command that cannot reach Redis says so once and exits 1', () => {
  let env: NodeJS.ProcessEnv;
  let where: string;
  beforeAll(async () => {
    const port = await closedPort();
    where = `127.0.0.1:${port}`;
    env = { REDIS_URL: `redis://sync:s3cret-pw@${where}/0` };
  });

  it.each([
    ['plan', ['orders']],
    ['status', []],
    ['status', ['orders-1']],
    ['enqueue', ['orders']],
    ['dashboard', ['--port', '0']],
  ])('%s %j', async (name, args) => {
    const io = captureIo(env);
    const command = await commands[name]!();
    expect(await command.main(args, io)).toBe(1);
    expect(io.all).toEqual([`cannot reach Redis at ${where} (REDIS_URL): ECONNREFUSED`]);
  });

  it.each([['list'], ['show', 'run-a:1'], ['replay', 'run-a:1'], ['purge', '--yes']])(
    'dlq %s',
    async (...args) => {
      const io = captureIo(env);
      const dlq = await commands.dlq!();
      expect(await dlq.main(args, io)).toBe(1);
      expect(io.all.join('\n')).toMatch(
        new RegExp(
          `^(dlq ${args[0]}: )?cannot reach Redis at ${where.replace(/\./g, '\\.')} \\(REDIS_URL\\): ECONNREFUSED$`,
        ),
      );
    },
  );

  it('through the real CLI: one line on stderr, no stack trace, no password', async () => {
    for (const args of [['status'], ['enqueue', 'orders'], ['dlq', 'list']]) {
      const result = await cli(args, env);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.stderr).toContain(`cannot reach Redis at ${where} (REDIS_URL)`);
      expect(result.stderr).not.toMatch(/\n\s+at |MaxRetriesPerRequest|s3cret-pw/);
    }
  });
});

describe('on a terminal and off it', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness('cli-terminal');
    h.createWorksheet({
      name: 'Parts',
      alias: 'parts',
      fields: [
        { name: 'Code', alias: 'code', type: '2', required: true, isTitle: true },
        { name: 'Qty', alias: 'qty', type: '6' },
      ],
    });
    await h.writeFile('parts.csv', 'code,qty\nP-1,1\nP-2,2\nP-3,3\n');
    await h.writeJob(
      'parts',
      `name: parts
source: { type: csv, path: ./parts.csv }
target: { worksheet: parts, mode: upsert, key: code, batchSize: 2 }
fields: { code: code, qty: qty }
`,
    );
  });
  afterAll(async () => {
    await h.close();
  });

  it('on a terminal: a progress bar, then the report; log lines readable, never JSON', async () => {
    const result = await cli(['run', 'parts'], { ...h.env, ROWBRIDGE_LOG_LEVEL: 'info' }, true);
    expect(result.code).toBe(0);
    const lines = result.stdout.split(/\r?\n|\r/).filter((line) => line.trim() !== '');
    expect(lines.some((line) => /^run parts (\[[#.]+\] \d+% )?read \d+, written \d+/.test(line))).toBe(true);
    expect(lines.some((line) => /^run parts-\S+ \(parts\): completed/.test(line))).toBe(true);
    expect(result.stdout).toMatch(/^ {2}created {7}3$/m);
    // Log lines: "[12:00:01] INFO: message {...}", one line each, ANSI colours aside.
    const plain = lines.map((line) => stripVTControlCharacters(line));
    expect(plain.some((line) => /^\[\d\d:\d\d:\d\d\] (INFO|WARN): /.test(line))).toBe(true);
    expect(plain.filter((line) => line.trimStart().startsWith('{'))).toEqual([]);
  }, 60_000);

  it('off a terminal: the report on stdout, logs as JSON lines on stderr', async () => {
    const result = await cli(['run', 'parts'], { ...h.env, ROWBRIDGE_LOG_LEVEL: 'info' });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^run parts-\S+ \(parts\): completed/);
    expect(result.stdout).not.toContain('{');
    const logs = result.stderr.split('\n').filter((line) => line !== '');
    expect(logs.length).toBeGreaterThan(0);
    for (const line of logs) expect(() => JSON.parse(line) as unknown).not.toThrow();
  }, 60_000);

  it('a platform that cannot be reached is named by host, port and ROWBRIDGE_API_URL', async () => {
    const port = await closedPort();
    const io = captureIo({ ...h.env, ROWBRIDGE_API_URL: `http://127.0.0.1:${port}`, ROWBRIDGE_RETRIES: '1' });
    const plan = await commands.plan!();
    expect(await plan.main(['parts'], io)).toBe(1);
    expect(io.stderr).toHaveLength(1);
    expect(io.stderr[0]).toMatch(
      new RegExp(
        `^cannot reach the platform at 127\\.0\\.0\\.1:${port} \\(ROWBRIDGE_API_URL\\): .*ECONNREFUSED`,
      ),
    );
  });

  it('status lists runs under column headers', async () => {
    const io = captureIo(h.env);
    const status = await commands.status!();
    expect(await status.main(['--job', 'parts'], io)).toBe(0);
    const [header, ...rows] = io.stdout.join('\n').split('\n');
    expect(header).toMatch(/^RUN\s+JOB\s+STATUS\s+CREATED\s+READ\s+WRITTEN\s+UNCHANGED\s+DEAD\s+MESSAGE$/);
    expect(rows.length).toBeGreaterThanOrEqual(2);
    // Written is created + updated, as in the report; the rerun of the same file wrote nothing.
    const counts = rows.map(
      (row) => /^parts-\S+\s+parts\s+completed\s+\S+ \S+\s+(\d+ +\d+ +\d+ +\d+)$/.exec(row)?.[1],
    );
    expect(counts.map((c) => c?.split(/ +/).join(' '))).toEqual(['3 0 3 0', '3 3 0 0']);
  });
});
