/**
 * `--version`, a usage that lists every command and subcommand, and hints that name the
 * command as the user ran it (`node src/cli.ts` or `rowbridge`), from the real CLI.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { commands } from '../../src/cli/commands.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

async function cli(entry: string, args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [entry, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const { code, stdout, stderr } = err as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

describe('the command line itself', () => {
  it('--version prints the version of package.json, exit 0', async () => {
    const { version } = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', '-V']) {
      const r = await cli('src/cli.ts', [flag]);
      expect(r).toEqual({ code: 0, stdout: `rowbridge ${version}\n`, stderr: '' });
    }
  });

  it('the usage lists every command, and every dlq subcommand', async () => {
    const r = await cli('src/cli.ts', ['--help']);
    expect(r.code).toBe(0);
    for (const name of Object.keys(commands)) expect(r.stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    expect(r.stdout).toContain('dlq list|show|export|replay|purge');
  });

  it('hints name the command as it was run: node src/cli.ts, or rowbridge through the bin', async () => {
    const direct = await cli('src/cli.ts', ['plan', '--jsn']);
    expect(direct.code).toBe(64);
    expect(direct.stderr).toMatch(/\n\(node src\/cli\.ts plan --help lists the options\)\n$/);
    const bin = await cli('bin/rowbridge.js', ['plan', '--jsn']);
    expect(bin.code).toBe(64);
    expect(bin.stderr).toMatch(/\n\(rowbridge plan --help lists the options\)\n$/);
    expect((await cli('src/cli.ts', ['--help'])).stdout).toContain(
      'node src/cli.ts <command> --help lists a command',
    );
  });
});
