/**
 * Attack: YAML job specs that cost the loader (validate, run, the dashboard) seconds and
 * gigabytes: aliases of aliases ("billion laughs") ended in a ReferenceError with a
 * stack; a block aliased under yaml's alias count expanded without limit; a 2 MB spec
 * was read and parsed whole; the dashboard parsed every spec again on each /jobs view.
 */
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Queue } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main as validate } from '../../src/cli/validate.ts';
import { createJobOperations } from '../../src/ops/dashboard/job-operations.ts';
import type { JobOperationsRuntime } from '../../src/ops/dashboard/job-operations.ts';
import type { RunJobData } from '../../src/queue/queues.ts';
import { JobSpecError } from '../../src/sync/job-spec/job-spec-error.ts';
import { loadJobSpec, parseJobSpec } from '../../src/sync/job-spec/load-job-spec.ts';
import { captureIo } from '../helpers/capture-io.ts';
import { createTempDir } from '../fixtures/sources/source-test-kit.ts';

const HEAD = `name: bomb\nsource: { type: ndjson, path: in.ndjson }\ntarget: { worksheet: ws, mode: upsert, key: a }\nfields: { a: A }\n`;

/** Nine levels of nine aliases each: 9^9 values from a few hundred bytes. */
function billionLaughs(): string {
  let text = `${HEAD}x0: &x0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n`;
  for (let i = 1; i <= 9; i++)
    text += `x${i}: &x${i} [${Array(9)
      .fill(`*x${i - 1}`)
      .join(', ')}]\n`;
  return text;
}

/** One block of 2,000 values aliased 90 times: under yaml's alias count, 180,000 values. */
function wideAliases(): string {
  const block = Array.from({ length: 2000 }, (_, i) => `v${i}`).join(', ');
  return `${HEAD}big: &big [${block}]\ncopies: [${Array(90).fill('*big').join(', ')}]\n`;
}

function jobSpecError(run: () => unknown): JobSpecError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(JobSpecError);
    return err as JobSpecError;
  }
  throw new Error('expected a JobSpecError');
}

describe('YAML job specs are bounded', () => {
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  beforeEach(async () => {
    tmp = await createTempDir('spec-yaml');
  });
  afterEach(async () => {
    await tmp.remove();
  });

  it.each([
    ['aliases of aliases', billionLaughs],
    ['one block aliased many times', wideAliases],
  ])('refuses %s as a job-spec error naming the file and the alias, no stack', (_what, make) => {
    const err = jobSpecError(() => parseJobSpec(make(), 'jobs/bomb.yaml'));
    expect(err.issues).toHaveLength(1);
    expect(err.issues[0]).toMatchObject({ file: 'jobs/bomb.yaml', path: '' });
    expect(err.issues[0]!.line).toBeGreaterThan(4);
    expect(err.issues[0]!.message).toMatch(
      /uses YAML aliases \(\*\w+\) that expand to more than 100000 values/,
    );
    expect(err.message).not.toMatch(/ReferenceError|\n\s+at /);
  });

  it('still lets anchors and aliases share a block', () => {
    const spec = parseJobSpec(
      `name: shared\nsource: { type: ndjson, path: in.ndjson }\ntarget: { worksheet: ws, mode: upsert, key: a }\n` +
        `fields:\n  a: &col { from: A, default: none }\n  b: *col\n`,
      'jobs/shared.yaml',
    );
    expect(spec.mappings).toEqual([
      { target: 'a', from: 'A', default: 'none' },
      { target: 'b', from: 'A', default: 'none' },
    ]);
  });

  it('refuses a spec over 1 MB before parsing it, in load and in validate', async () => {
    const file = await tmp.write(
      'huge.yaml',
      `${HEAD.replace('bomb', 'huge')}# ${'x'.repeat(2 * 1024 * 1024)}\n`,
    );
    const err = await loadJobSpec(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobSpecError);
    expect((err as JobSpecError).message).toContain(`${file} is 2097`);
    expect((err as JobSpecError).message).toContain('over the 1048576 bytes (1 MB) a job spec may hold');
    const io = captureIo({});
    expect(await validate([file], io)).toBe(1);
    expect(io.stderr.join('\n')).toContain('over the 1048576 bytes (1 MB) a job spec may hold');
  });
});

describe('the dashboard parses a job spec again only when its file changed', () => {
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  beforeEach(async () => {
    tmp = await createTempDir('spec-cache');
  });
  afterEach(async () => {
    await tmp.remove();
  });

  it('reads each unchanged spec once across /jobs views, and a changed or broken one again', async () => {
    const jobs = path.join(tmp.dir, 'jobs');
    await mkdir(jobs);
    const spec = (name: string, worksheet: string) =>
      `name: ${name}\nsource: { type: ndjson, path: in.ndjson }\ntarget: { worksheet: ${worksheet}, mode: upsert, key: a }\nfields: { a: A }\n`;
    await writeFile(path.join(jobs, 'orders.yaml'), spec('orders', 'ws1'));
    await writeFile(path.join(jobs, 'bomb.yaml'), billionLaughs());
    const loads: string[] = [];
    const rt = {
      jobsDir: jobs,
      async loadJob(name: string) {
        loads.push(name);
        const file = path.join(jobs, `${name}.yaml`);
        return { spec: await loadJobSpec(file), file };
      },
      redis: {},
      statePrefix: 'unused',
      runs: {},
    } as unknown as JobOperationsRuntime;
    const ops = createJobOperations(rt, {} as Queue<RunJobData>);

    const first = await ops.listJobs();
    expect(first.find((j) => j.name === 'orders')?.spec?.target?.worksheet).toBe('ws1');
    const bomb = first.find((j) => j.name === 'bomb');
    expect(bomb?.error).toMatch(/^bomb\.yaml:\d+:\d+ uses YAML aliases/);
    await ops.listJobs();
    await ops.listJobs();
    expect(loads.sort()).toEqual(['bomb', 'orders']);

    await writeFile(path.join(jobs, 'orders.yaml'), spec('orders', 'ws22'));
    // A different size alone shows the change, even where mtime is coarse.
    await utimes(path.join(jobs, 'orders.yaml'), new Date(), new Date(Date.now() + 2000));
    const after = await ops.listJobs();
    expect(after.find((j) => j.name === 'orders')?.spec?.target?.worksheet).toBe('ws22');
    expect(loads.filter((n) => n === 'orders')).toHaveLength(2);
  });
});
