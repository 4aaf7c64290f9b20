/**
 * Incremental pulls from the CLI: they read only what changed (the platform filters by
 * update time), and they start over when their saved cursor no longer describes the
 * sink: `run --full`, a sink file that is gone, a job whose fields changed,
 * `enqueue --reset-cursor`. A backfill range (`enqueue --from/--to`) reads a range of
 * update times and merges it into the file (issue 23 §1, §2).
 */
import type { ChildProcess } from 'node:child_process';
import { appendFile, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSource } from '../../src/sync/sources/create-source.ts';
import { collect } from '../fixtures/sources/source-test-kit.ts';
import { killChildren, spawnCli, until } from '../helpers/cli-process.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const ROWS = 2500;
const START = Date.parse('2025-06-01T00:00:00Z');

describe('incremental pulls read what changed and can start over', { timeout: 180_000 }, () => {
  let h: Harness;
  let ws: string;
  let clock = START;
  const children: ChildProcess[] = [];
  const rowIds = new Map<string, string>();

  beforeAll(async () => {
    h = await createHarness('pullrestart', { now: () => clock });
    ws = h.createWorksheet({
      name: 'Parts',
      alias: 'parts',
      fields: [
        { name: 'Code', alias: 'code', type: 'Text', isTitle: true },
        { name: 'Note', alias: 'note', type: 'Text' },
      ],
    });
    for (let start = 1; start <= ROWS; start += 500) {
      clock += 1_000;
      const codes = Array.from({ length: 500 }, (_, i) => `P-${String(start + i).padStart(4, '0')}`);
      const { rowIds: ids } = await h.rt.clientFor().rows.batchCreate(ws, {
        rows: codes.map((code) => ({
          fields: [
            { id: 'code', value: code },
            { id: 'note', value: 'n' },
          ],
        })),
      });
      codes.forEach((code, i) => rowIds.set(code, ids[i]!));
    }
    // The runs come a minute later on the platform's clock: a pull's cursor stops at its
    // scan's start on that clock less the margin, and rows changed within the margin
    // before a scan are read again by the next run.
    clock += 60_000;
  });
  afterEach(() => killChildren(children));
  afterAll(async () => h.close());

  const edit = async (codes: string[], note: string) => {
    clock += 60_000;
    await h.rt.clientFor().rows.batchUpdate(ws, {
      rowIds: codes.map((c) => rowIds.get(c)!),
      fields: [{ id: 'note', value: note }],
    });
    clock += 60_000;
  };
  const readCsv = async (file: string) =>
    (await collect(createSource({ type: 'csv', path: file }, { env: {}, baseDir: h.dir }))).map(
      (r) => r.data,
    );
  /** `rowbridge ARGS`; resolves what it printed and the platform requests it made. */
  const cli = async (args: string[]) => {
    const before = h.emulator.requests.length;
    const done = await spawnCli(h, children, args).exited;
    expect(done.code, `${args.join(' ')}: ${done.stderr}`).toBe(0);
    return { ...done, requests: h.emulator.requests.slice(before) };
  };
  const lastRun = async (job: string) => (await h.rt.runs.list({ job, limit: 1 }))[0]!;
  const writeJob = (job: string, fields: string) =>
    h.writeJob(
      job,
      `name: ${job}
source: { type: worksheet, worksheet: parts }
sink: { type: csv, path: ./${job}.csv, key: code }
fields: { ${fields} }
incremental: { cursor: _updatedAt }
`,
    );

  it('reads only the rows changed since the last run: 2 edited rows cost 3 requests or fewer', async () => {
    await writeJob('parts-changes', 'code: code, note: note');
    await cli(['run', 'parts-changes']);
    expect(await readCsv('parts-changes.csv')).toHaveLength(ROWS);

    await edit(['P-0007', 'P-2400'], 'edited');
    const second = await cli(['run', 'parts-changes']);
    expect((await lastRun('parts-changes')).read).toBe(2);
    expect(second.requests.length).toBeLessThanOrEqual(3);
    const rows = await readCsv('parts-changes.csv');
    expect(rows).toHaveLength(ROWS);
    expect(rows.filter((r) => r.note === 'edited').map((r) => r.code)).toEqual(['P-0007', 'P-2400']);
  });

  it('run --full reads every row again and rebuilds the file', async () => {
    await writeJob('parts-full', 'code: code, note: note');
    await cli(['run', 'parts-full']);
    // A row the file should not hold: --full writes the file anew, without it.
    const file = path.join(h.dir, 'parts-full.csv');
    await appendFile(file, 'X-9999,stray\n');
    const full = await cli(['run', 'parts-full', '--full']);
    expect(full.stderr + full.stdout).toContain('--full');
    const run = await lastRun('parts-full');
    expect(run.read).toBe(ROWS);
    expect(run.startedOver).toContain('--full');
    const rows = await readCsv('parts-full.csv');
    expect(rows).toHaveLength(ROWS);
    expect(rows.some((r) => r.code === 'X-9999')).toBe(false);
  });

  it('a sink file that is gone is written whole again, with a warning', async () => {
    await writeJob('parts-gone', 'code: code, note: note');
    await cli(['run', 'parts-gone']);
    await rm(path.join(h.dir, 'parts-gone.csv'));
    const again = await cli(['run', 'parts-gone']);
    expect(again.stderr).toContain('the sink file is missing');
    expect((await lastRun('parts-gone')).read).toBe(ROWS);
    expect(await readCsv('parts-gone.csv')).toHaveLength(ROWS);
  });

  it('a job whose fields changed starts over and writes every row in the new shape', async () => {
    await writeJob('parts-shape', 'code: code');
    await cli(['run', 'parts-shape']);
    expect(Object.keys((await readCsv('parts-shape.csv'))[0]!)).toEqual(['code']);
    await writeJob('parts-shape', 'code: code, note: note, row: { from: rowid }');
    const again = await cli(['run', 'parts-shape']);
    expect(again.stderr).toContain('changed its source, filter, fields or sink');
    const rows = await readCsv('parts-shape.csv');
    expect(rows).toHaveLength(ROWS);
    expect(rows.every((r) => typeof r.row === 'string' && r.row !== '')).toBe(true);
    // The run after it continues from the new cursor: nothing changed, nothing read.
    await cli(['run', 'parts-shape']);
    expect((await lastRun('parts-shape')).read).toBe(0);
  });

  it('enqueue --reset-cursor makes the next run read from the beginning', async () => {
    await writeJob('parts-reset', 'code: code, note: note');
    await cli(['run', 'parts-reset']);
    await cli(['run', 'parts-reset']);
    expect((await lastRun('parts-reset')).read).toBe(0);
    const queued = await cli(['enqueue', 'parts-reset', '--reset-cursor', '--json']);
    const { runId } = JSON.parse(queued.stdout) as { runId: string };
    h.startWorkers();
    const { record } = await h.waitForRun(runId);
    expect(record.status).toBe('completed');
    expect(record.read).toBe(ROWS);
    expect(await readCsv('parts-reset.csv')).toHaveLength(ROWS);
  });

  it('run --reset-cursor reads from the beginning, in this process', async () => {
    await writeJob('parts-rerun', 'code: code, note: note');
    await cli(['run', 'parts-rerun']);
    await cli(['run', 'parts-rerun']);
    expect((await lastRun('parts-rerun')).read).toBe(0);
    await cli(['run', 'parts-rerun', '--reset-cursor']);
    expect((await lastRun('parts-rerun')).read).toBe(ROWS);
    expect(await readCsv('parts-rerun.csv')).toHaveLength(ROWS);
  });

  it('run --reset-cursor does not resume an unfinished run: it says so, --fresh starts anew', async () => {
    await writeJob('parts-held', 'code: code, note: note');
    // A run killed while it reads: unfinished, its lock held by a process that is gone.
    const first = spawnCli(h, children, ['run', 'parts-held']);
    await until(
      async () => (await h.rt.runs.list({ job: 'parts-held', limit: 1 }))[0]?.status === 'running',
      60_000,
      'the run to start',
    );
    first.child.kill('SIGKILL');
    await first.exited;
    const refused = await spawnCli(h, children, ['run', 'parts-held', '--reset-cursor']).exited;
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(/did not finish \(running\) and would be resumed.*add --fresh/);
    await cli(['run', 'parts-held', '--reset-cursor', '--fresh']);
    expect((await lastRun('parts-held')).read).toBe(ROWS);
  });

  it('enqueue --from/--to on a pull reads that range of update times and merges it in', async () => {
    await writeJob('parts-range', 'code: code, note: note');
    await cli(['run', 'parts-range']);
    const cursor = await h.rt.runs.getCursor('parts-range');
    // Three rows edited at a known minute; the range covers that minute only.
    await edit(['P-0100', 'P-0200', 'P-0300'], 'in range');
    const at = new Date(clock - 60_000);
    const wall = (ms: number) => new Date(ms + 8 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
    await rm(path.join(h.dir, 'parts-range.csv'));
    await h.writeFile('parts-range.csv', 'code,note\nP-0100,old\nP-0101,old\n');
    const queued = await cli([
      'enqueue',
      'parts-range',
      '--from',
      wall(at.getTime() - 30_000),
      '--to',
      wall(at.getTime() + 30_000),
      '--json',
    ]);
    const { runId } = JSON.parse(queued.stdout) as { runId: string };
    h.startWorkers();
    const { record } = await h.waitForRun(runId);
    expect(record.status, record.message).toBe('completed');
    expect(record.read).toBe(3);
    const rows = await readCsv('parts-range.csv');
    expect(new Map(rows.map((r) => [r.code, r.note]))).toEqual(
      new Map([
        ['P-0100', 'in range'],
        ['P-0101', 'old'],
        ['P-0200', 'in range'],
        ['P-0300', 'in range'],
      ]),
    );
    // A backfill leaves the job's cursor where its runs left it.
    expect(await h.rt.runs.getCursor('parts-range')).toBe(cursor);
    expect(await readFile(path.join(h.dir, 'parts-range.csv'), 'utf8')).toContain('P-0101,old');
  });
});
