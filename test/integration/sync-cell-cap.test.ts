/**
 * Batch job data never holds more than its batch: a record with a cell over
 * ROWBRIDGE_MAX_CELL_BYTES is dead-lettered with the reason, and its neighbours land.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

describe('cell size cap', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('dead-letters the record with an oversized cell, naming the column and the limit; the rest land', async () => {
    h = await createHarness('cell-cap', {}, { ROWBRIDGE_MAX_CELL_BYTES: '2048' });
    const ws = h.createWorksheet({
      name: 'Notes',
      alias: 'notes',
      fields: [
        { name: 'Code', alias: 'code', type: '2', required: true, isTitle: true },
        { name: 'Body', alias: 'body', type: '2' },
      ],
    });
    const big = 'é'.repeat(1500); // 3,000 bytes of UTF-8 in 1,500 characters
    await h.writeFile('notes.csv', `code,body\nA,short\nB,${big}\nC,also short\n`);
    await h.writeJob(
      'notes',
      `name: notes
source: { type: csv, path: ./notes.csv }
target: { worksheet: notes, mode: upsert, key: code }
fields: { code: code, body: body }
`,
    );
    const { record, report } = await h.runJob('notes');
    expect(record.status).toBe('completed');
    expect(
      h.emulator.state
        .rows(ws)
        .map((r) => r.values.code)
        .sort(),
    ).toEqual(['A', 'C']);
    expect(report.deadLetteredTotal).toBe(1);
    const { entries } = await h.rt.deadLetters.list({ runId: record.runId });
    expect(entries).toHaveLength(1);
    expect(entries[0]!.field).toBe('body');
    expect(entries[0]!.message).toMatch(
      /column body holds 2\.9 KB, over the 2\.0 KB a cell may hold \(ROWBRIDGE_MAX_CELL_BYTES\)/,
    );
    // The dead letter keeps a bounded excerpt, not the whole cell.
    expect(JSON.stringify(entries[0]!.source).length).toBeLessThan(12_000);
  });
});
