/** Job spec checks seen through `rowbridge validate` (issue 23 §4): one cursor setting. */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLI = path.resolve(import.meta.dirname, '../../src/cli.ts');
const run = promisify(execFile);

describe('validate', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-spec-checks-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function validate(name: string, yaml: string) {
    await writeFile(path.join(dir, `${name}.yaml`), yaml);
    try {
      const { stdout, stderr } = await run(process.execPath, [CLI, 'validate', `${name}.yaml`], {
        cwd: dir,
        env: { PATH: process.env.PATH, PG_URL: 'postgres://db.example/app' },
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const { code, stdout, stderr } = err as { code: number; stdout: string; stderr: string };
      return { code, stdout, stderr };
    }
  }

  it('refuses incremental.cursor together with a SQL source cursorColumn', async () => {
    const source =
      '{ type: postgres, urlEnv: PG_URL, table: orders, keyColumn: id, cursorColumn: updated_at }';
    const both = await validate(
      'pg',
      `name: pg\nsource: ${source}\ntarget: { worksheet: w, mode: upsert, key: a }\nfields: { a: id }\nincremental: { cursor: updated_at }\n`,
    );
    expect(both.code).toBe(1);
    expect(both.stderr).toBe(
      'pg.yaml:5:14 incremental: cannot be given together with source.cursorColumn ("updated_at"): ' +
        'a job has one cursor; keep source.cursorColumn for a "postgres" source and drop incremental\n',
    );
    const one = await validate(
      'pg',
      `name: pg\nsource: ${source}\ntarget: { worksheet: w, mode: upsert, key: a }\nfields: { a: id }\n`,
    );
    expect(one.code, one.stderr).toBe(0);
  });
});
