import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../../src/cli/io.ts';
import { main } from '../../../src/cli/validate.ts';

interface Captured {
  io: CliIo;
  out: string[];
  err: string[];
}

function capture(cwd: string): Captured {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { out: (text) => out.push(text), err: (text) => err.push(text), isTty: false, env: {}, cwd },
    out,
    err,
  };
}

const VALID = `name: orders
source: { type: csv, path: ./data/orders.csv }
target: { worksheet: orders, mode: upsert, key: order_no }
fields: { order_no: Order Number }
`;

const PULL = `name: export
source: { type: worksheet, worksheet: orders }
sink: { type: ndjson, path: out.ndjson }
fields: { order_no: order_no }
`;

const INVALID = `name: broken
source: { type: csv, path: in.csv }
target:
  worksheet: orders
  mode: upsrt
fields: { a: A }
`;

let cwd = '';

beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'rowbridge-validate-'));
  await mkdir(join(cwd, 'jobs'));
  await writeFile(join(cwd, 'jobs', 'orders.yaml'), VALID);
  await writeFile(join(cwd, 'jobs', 'export.yaml'), PULL);
  await writeFile(join(cwd, 'jobs', 'broken.yaml'), INVALID);
});

afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('rowbridge validate', () => {
  it('exits 0 and summarises a valid job given by name', async () => {
    const { io, out, err } = capture(cwd);
    expect(await main(['orders'], io)).toBe(0);
    expect(out).toEqual(['ok: jobs/orders.yaml (orders: csv → orders, upsert)']);
    expect(err).toEqual([]);
  });

  it('looks a job name up in ROWBRIDGE_JOBS_DIR, as run does, and finds NAME.yml too', async () => {
    await mkdir(join(cwd, 'specs'));
    await writeFile(join(cwd, 'specs', 'elsewhere.yml'), VALID.replace('name: orders', 'name: elsewhere'));
    const { io, out, err } = capture(cwd);
    io.env = { ROWBRIDGE_JOBS_DIR: 'specs' };
    expect(await main(['elsewhere'], io)).toBe(0);
    expect(out).toEqual(['ok: specs/elsewhere.yml (elsewhere: csv → orders, upsert)']);
    expect(err).toEqual([]);
    // A name the folder does not hold is named with the folder it was looked for in.
    const missing = capture(cwd);
    missing.io.env = { ROWBRIDGE_JOBS_DIR: 'specs' };
    expect(await main(['orders'], missing.io)).toBe(1);
    expect(missing.err.join('')).toContain('specs/orders.yaml cannot be read: no such file');
  });

  it('accepts paths and several jobs, and summarises pull jobs', async () => {
    const { io, out } = capture(cwd);
    expect(await main(['jobs/orders.yaml', join(cwd, 'jobs', 'export.yaml')], io)).toBe(0);
    expect(out).toEqual([
      'ok: jobs/orders.yaml (orders: csv → orders, upsert)',
      'ok: jobs/export.yaml (export: orders → ndjson out.ndjson, pull)',
    ]);
  });

  it('exits 1 and prints each issue with file, line, column and path', async () => {
    const { io, out, err } = capture(cwd);
    expect(await main(['broken'], io)).toBe(1);
    expect(out).toEqual([]);
    expect(err).toEqual([
      'jobs/broken.yaml:5:9 target.mode: must be one of append, upsert, update, mirror, two-way; got "upsrt" (did you mean "upsert"?)',
    ]);
  });

  it('exits 1 when any of several jobs is invalid', async () => {
    const { io, out, err } = capture(cwd);
    expect(await main(['orders', 'broken'], io)).toBe(1);
    expect(out).toHaveLength(1);
    expect(err).toHaveLength(1);
  });

  it('prints {valid, issues} with --json', async () => {
    const bad = capture(cwd);
    expect(await main(['--json', 'broken'], bad.io)).toBe(1);
    expect(JSON.parse(bad.out.join(''))).toEqual({
      valid: false,
      issues: [
        {
          file: 'jobs/broken.yaml',
          path: 'target.mode',
          line: 5,
          column: 9,
          message:
            'must be one of append, upsert, update, mirror, two-way; got "upsrt" (did you mean "upsert"?)',
        },
      ],
    });
    const good = capture(cwd);
    expect(await main(['orders', '--json'], good.io)).toBe(0);
    expect(JSON.parse(good.out.join(''))).toEqual({ valid: true, issues: [] });
  });

  it('reports a job that does not exist', async () => {
    const { io, err } = capture(cwd);
    expect(await main(['nope'], io)).toBe(1);
    expect(err).toEqual(['jobs/nope.yaml cannot be read: no such file']);
  });

  it('exits 64 with usage when no job or an unknown option is given', async () => {
    const none = capture(cwd);
    expect(await main([], none.io)).toBe(64);
    expect(none.err.join('')).toContain('usage: rowbridge validate');
    const unknown = capture(cwd);
    expect(await main(['--strict', 'orders'], unknown.io)).toBe(64);
    expect(unknown.err.join('')).toContain('unknown option --strict');
  });
});
