/**
 * A job's schedule (issue 23 §4): a 6-field cron is refused unless `seconds: true`;
 * `validate` prints the next three fire times in the schedule's zone, and the worker
 * registers the schedule in that zone.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueues } from '../../src/queue/queues.ts';
import { registerSchedules } from '../../src/queue/schedules.ts';
import { createHarness } from '../helpers/sync-harness.ts';

const CLI = path.resolve(import.meta.dirname, '../../src/cli.ts');
const run = promisify(execFile);

/** `rowbridge validate FILE` in `dir`: exit code and output. */
async function validate(dir: string, file: string, env: NodeJS.ProcessEnv = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, 'validate', file], {
      cwd: dir,
      env: { PATH: process.env.PATH, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const { code, stdout, stderr } = err as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

function job(schedule: string): string {
  return `name: nightly
source: { type: csv, path: ./in.csv }
target: { worksheet: w, mode: append }
fields: { a: a }
schedule: ${schedule}
`;
}

describe('schedule', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-schedule-'));
    await writeFile(path.join(dir, 'in.csv'), 'a\n1\n');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a 6-field cron without seconds: true is refused, saying what it would do', async () => {
    await writeFile(path.join(dir, 'nightly.yaml'), job('"*/5 * * * * *"'));
    const r = await validate(dir, 'nightly.yaml');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'nightly.yaml:5:11 schedule: has 6 fields, so its first would be seconds ("*/5 * * * * *" would fire every few seconds): ' +
        'write { cron: "*/5 * * * * *", seconds: true } if seconds are meant, else the 5 fields "minute hour day-of-month month day-of-week"\n',
    );
  });

  it('with seconds: true and a zone it is valid; validate prints the next three fire times there', async () => {
    await writeFile(
      path.join(dir, 'nightly.yaml'),
      job('{ cron: "0 30 3 * * *", seconds: true, timezone: Asia/Shanghai }'),
    );
    const r = await validate(dir, 'nightly.yaml', { TZ: 'America/New_York' });
    expect(r.code, r.stderr).toBe(0);
    const line = r.stdout.split('\n')[1]!;
    const m = /^ {2}schedule "0 30 3 \* \* \*" fires next at (.+) \(Asia\/Shanghai\)$/.exec(line);
    expect(m, line).not.toBeNull();
    const times = m![1]!.split(', ');
    expect(times).toHaveLength(3);
    for (const t of times) expect(t).toMatch(/^\d{4}-\d\d-\d\d 03:30:00$/);
  });

  it('a 5-field cron fires in the worker zone, and says which', async () => {
    await writeFile(path.join(dir, 'nightly.yaml'), job('"0 2 * * 1"'));
    const r = await validate(dir, 'nightly.yaml', { TZ: 'America/New_York' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^ {2}schedule "0 2 \* \* 1" fires next at (\d{4}-\d\d-\d\d 02:00:00, ){2}\d{4}-\d\d-\d\d 02:00:00 \(America\/New_York\)$/m,
    );
  });

  it('the worker registers the schedule with its zone', async () => {
    const h = await createHarness('schedule-tz');
    const queues = createQueues(h.rt);
    try {
      await h.writeFile('in.csv', 'a\n1\n');
      await h.writeJob('nightly', job('{ cron: "0 30 3 * * *", seconds: true, timezone: Asia/Shanghai }'));
      expect((await registerSchedules(h.rt)).registered).toEqual(['nightly']);
      const [scheduler] = await queues.runs.getJobSchedulers();
      expect(scheduler).toMatchObject({ key: 'nightly', pattern: '0 30 3 * * *', tz: 'Asia/Shanghai' });
    } finally {
      await queues.runs.removeJobScheduler('nightly').catch(() => undefined);
      await queues.close();
      await h.close();
    }
  });
});
