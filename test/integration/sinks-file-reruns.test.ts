/**
 * Every file sink a pull can write (csv, ndjson) in each mode (full, incremental), run
 * from the CLI three times as a user runs it: the first pull, a second after rows were
 * edited and added, a third with no change. Each run must exit 0 and leave the file
 * holding every row once with its latest values, and no aside file behind.
 *
 * The worksheet holds more rows than one read batch and more bytes than one 64 KiB
 * write of the merge, which is what broke the second incremental run (issue 21).
 */
import type { ChildProcess } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSource } from '../../src/sync/sources/create-source.ts';
import { collect } from '../fixtures/sources/source-test-kit.ts';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const ROWS = 3000;
const NOTE = 'a note long enough that the old rows outgrow one write of the merge';

describe('a file sink pulled three times from the CLI', { timeout: 180_000 }, () => {
  let h: Harness;
  let ws: string;
  let clock = Date.parse('2025-06-01T00:00:00Z');
  const children: ChildProcess[] = [];
  const rowIds = new Map<string, string>();

  const createRows = async (from: number, count: number) => {
    clock += 1_000;
    const codes = Array.from({ length: count }, (_, i) => `O-${String(from + i).padStart(5, '0')}`);
    const { rowIds: ids } = await h.rt.clientFor().rows.batchCreate(ws, {
      rows: codes.map((code) => ({
        fields: [
          { id: 'order_no', value: code },
          { id: 'note', value: NOTE },
        ],
      })),
    });
    codes.forEach((code, i) => rowIds.set(code, ids[i]!));
  };

  beforeAll(async () => {
    h = await createHarness('filereruns', { now: () => clock });
    ws = h.createWorksheet({
      name: 'Orders',
      alias: 'orders',
      fields: [
        { name: 'Order no', alias: 'order_no', type: 'Text', isTitle: true },
        { name: 'Note', alias: 'note', type: 'Text' },
      ],
    });
    for (let start = 1; start <= ROWS; start += 100) await createRows(start, 100);
  });
  afterEach(() => killChildren(children));
  afterAll(async () => h.close());

  const read = async (file: string, type: 'csv' | 'ndjson') =>
    (await collect(createSource({ type, path: file }, { env: {}, baseDir: h.dir }))).map((r) => r.data);
  const asideFiles = async () => (await readdir(h.dir)).filter((n) => n.includes('.rowbridge-'));
  const run = async (job: string) => {
    clock += 60_000;
    const done = await spawnCli(h, children, ['run', job]).exited;
    expect(done.code, `${job}: ${done.stderr}`).toBe(0);
  };

  const shapes = [
    { type: 'csv', incremental: false },
    { type: 'csv', incremental: true },
    { type: 'ndjson', incremental: false },
    { type: 'ndjson', incremental: true },
  ] as const;

  it.each(shapes)(
    '$type, incremental $incremental: first run, a run after 30 edits and 20 new rows, a run with none',
    async ({ type, incremental }) => {
      const job = `pulled-${type}-${incremental ? 'changes' : 'full'}`;
      const file = `${job}.${type}`;
      await h.writeJob(
        job,
        `name: ${job}
source: { type: worksheet, worksheet: orders }
sink: { type: ${type}, path: ./${file}, key: order_no }
fields: { order_no: order_no, note: note }
${incremental ? 'incremental: { cursor: _updatedAt }\n' : ''}`,
      );
      /** The file holds each row of the worksheet once, with its latest note. */
      const holds = async () => {
        const expected = new Map(
          h.emulator.state.rows(ws).map((r) => [String(r.values.order_no), String(r.values.note)]),
        );
        const rows = await read(file, type);
        expect(rows).toHaveLength(expected.size);
        expect(new Map(rows.map((r) => [String(r.order_no), String(r.note)]))).toEqual(expected);
        expect(await asideFiles()).toEqual([]);
        return rows;
      };

      await run(job);
      await holds();

      // Edits and additions that only this shape's runs have not seen yet.
      const edited = [...rowIds.keys()].filter((_, i) => i % 97 === 5).slice(0, 30);
      expect(edited).toHaveLength(30);
      clock += 1_000;
      await h.rt.clientFor().rows.batchUpdate(ws, {
        rowIds: edited.map((c) => rowIds.get(c)!),
        fields: [{ id: 'note', value: `edited for ${job}` }],
      });
      await createRows(10_000 + rowIds.size, 20);
      await run(job);
      const second = await holds();
      expect(second.filter((r) => r.note === `edited for ${job}`)).toHaveLength(30);
      expect(second.length).toBeGreaterThanOrEqual(ROWS + 20);
      await run(job);
      expect(await holds()).toEqual(second);
    },
  );
});
