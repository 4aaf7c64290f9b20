/**
 * A worksheet read by `_updatedAt` pages through the rows with no snapshot. A row edited
 * during the scan, on a page already read, is not seen; a row on a later page edited
 * after it is. A run that saved the largest `_updatedAt` it read put the cursor past the
 * first edit, and no later run read that row again: the edit never landed. Runs that
 * write by key (upsert, a pull's sink) now save no cursor past the scan's start, less a
 * minute for clock skew (worksheet-source.ts). From the CLI, against the emulator, whose
 * `beforeHandle` hook holds the second page while the test edits the worksheet.
 */
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorRequest } from '../../src/emulator/options.ts';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/** One more than a page (the reader asks for 1000 rows a page): the last row is on page 2. */
const ROWS = 1001;

/** A count of the run report the CLI prints (`  updated      3`). */
function reported(stdout: string, what: string): number {
  const m = new RegExp(`^ {2}${what} +(\\d+)$`, 'm').exec(stdout);
  if (m === null) throw new Error(`no "${what}" line in the run report:\n${stdout}`);
  return Number(m[1]);
}

describe(
  'a row edited during an incremental worksheet scan is read by the next run',
  { timeout: 180_000 },
  () => {
    const children: ChildProcess[] = [];
    // The platform's clock: the rows are made ten minutes ago, the edits happen now.
    let clock = Date.now() - 10 * 60_000;
    let hold: ((request: EmulatorRequest) => Promise<void>) | undefined;
    let h: Harness;
    let orders: string;
    let copies: string;
    let first: string;
    let last: string;

    beforeAll(async () => {
      h = await createHarness('scan-race', { now: () => clock, beforeHandle: (request) => hold?.(request) });
      const fields = [
        { name: 'Code', alias: 'code', type: 'Text', required: true, isTitle: true },
        { name: 'Status', alias: 'status', type: 'Text' },
      ];
      orders = h.createWorksheet({ name: 'Orders', alias: 'orders', fields });
      copies = h.createWorksheet({ name: 'Copies', alias: 'copies', fields });
      const client = h.rt.clientFor();
      const code = (i: number) => `C-${String(i).padStart(4, '0')}`;
      const made = await client.rows.batchCreate(orders, {
        rows: Array.from({ length: ROWS - 1 }, (_, i) => ({
          fields: [
            { id: 'code', value: code(i + 1) },
            { id: 'status', value: 'new' },
          ],
        })),
      });
      // A second later: created last, it sorts onto page 2.
      clock += 1_000;
      const lastMade = await client.rows.batchCreate(orders, {
        rows: [
          {
            fields: [
              { id: 'code', value: code(ROWS) },
              { id: 'status', value: 'new' },
            ],
          },
        ],
      });
      first = made.rowIds[0]!;
      last = lastMade.rowIds[0]!;
      await h.writeJob(
        'copy',
        `name: copy
source: { type: worksheet, worksheet: orders }
target: { worksheet: copies, mode: upsert, key: code }
fields: { code: code, status: status }
incremental: { cursor: _updatedAt }
`,
      );
      await h.writeJob(
        'export',
        `name: export
source: { type: worksheet, worksheet: orders }
sink: { type: ndjson, path: ./orders.ndjson }
fields: { row: rowid, code: code, status: status }
incremental: { cursor: _updatedAt }
`,
      );
    });
    afterEach(() => killChildren(children));
    afterAll(async () => {
      await h.close();
    });

    /** Holds page 2 of the next scan of `orders` while the first row, then the last one, is edited. */
    function editDuringNextScan(status: string): { done: () => boolean } {
      let edited = false;
      hold = async (request) => {
        const page = (request.body as { pageIndex?: unknown } | undefined)?.pageIndex;
        if (edited || !request.path.endsWith(`${orders}/rows/list`) || page !== 2) return;
        edited = true;
        const client = h.rt.clientFor();
        clock = Date.now();
        await client.rows.batchUpdate(orders, { rowIds: [first], fields: [{ id: 'status', value: status }] });
        // Two seconds later on the platform's clock: the row page 2 shows is the newer one.
        clock += 2_000;
        await client.rows.batchUpdate(orders, { rowIds: [last], fields: [{ id: 'status', value: status }] });
      };
      return { done: () => edited };
    }

    const run = async (job: string) => {
      const result = await spawnCli(h, children, ['run', job]).exited;
      expect(result.code, result.stderr).toBe(0);
      return result.stdout;
    };
    const copied = (code: string) =>
      h.emulator.state.rows(copies).find((r) => r.values.code === code)?.values.status;

    it('upsert: the edit the scan missed lands on the next run, and a quiet run after it writes nothing', async () => {
      // The first run reads every row, in two pages.
      const race = editDuringNextScan('edited');
      expect(reported(await run('copy'), 'created')).toBe(ROWS);
      expect(race.done()).toBe(true);
      // The scan read page 1 before the edit and page 2 after: only the last row's edit landed.
      expect(copied('C-1001')).toBe('edited');
      expect(copied('C-0001')).toBe('new');

      const next = await run('copy');
      expect(copied('C-0001')).toBe('edited');
      expect(reported(next, 'updated')).toBe(1);

      // Quiet: the rows changed since the saved cursor are read again, found unchanged, and
      // nothing is written.
      const before = h.emulator.requests.length;
      const quiet = await run('copy');
      expect(reported(quiet, 'updated') + reported(quiet, 'created')).toBe(0);
      expect(reported(quiet, 'unchanged')).toBe(2);
      const writes = h.emulator.requests
        .slice(before)
        .filter((r) => r.method !== 'GET' && !r.path.endsWith('/list'));
      expect(writes).toEqual([]);
    });

    it('pull: the edit the scan missed reaches the sink on the next run', async () => {
      const pulled = async () =>
        new Map(
          (await readFile(path.join(h.dir, 'orders.ndjson'), 'utf8'))
            .split('\n')
            .filter((line) => line !== '')
            .map((line) => JSON.parse(line) as { code: string; status: string })
            .map((r) => [r.code, r.status]),
        );
      const race = editDuringNextScan('pulled');
      await run('export');
      expect(race.done()).toBe(true);
      expect((await pulled()).size).toBe(ROWS);
      expect((await pulled()).get('C-1001')).toBe('pulled');
      expect((await pulled()).get('C-0001')).toBe('edited');

      await run('export');
      const sink = await pulled();
      expect(sink.get('C-0001')).toBe('pulled');
      expect(sink.size).toBe(ROWS);
    });
  },
);
