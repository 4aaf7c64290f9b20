import { describe, expect, it } from 'vitest';
import { checkSourceColumns, COLUMN_SAMPLE } from '../../../../src/sync/read/source-columns.ts';
import type { SourceItem } from '../../../../src/sync/sources/source-error.ts';

const spec = { type: 'csv', path: './orders.csv' } as const;
const mappings = [{ target: 'Order', from: 'order' }];

/** A source of `n` records that notes whether it was closed and how far it was read. */
function source(n: number, column = 'order') {
  const seen = { read: 0, closed: false };
  async function* records(): AsyncGenerator<SourceItem> {
    try {
      for (let i = 0; i < n; i++) {
        // A file source turns the event loop between chunks of records.
        if (i % 64 === 0) await new Promise((r) => setImmediate(r));
        seen.read += 1;
        yield { data: { [column]: `SO-${i}` }, position: { index: i, line: i + 2 } };
      }
    } finally {
      seen.closed = true;
    }
  }
  return { records: records(), seen };
}

describe('checkSourceColumns', () => {
  it('passes every record through, in order, the sample first', async () => {
    const { records, seen } = source(COLUMN_SAMPLE * 3 + 7);
    const out: unknown[] = [];
    for await (const r of checkSourceColumns('orders', spec, mappings, records)) out.push(r.data.order);
    expect(out).toEqual(Array.from({ length: COLUMN_SAMPLE * 3 + 7 }, (_, i) => `SO-${i}`));
    expect(seen.closed).toBe(true);
  });

  it('passes a source shorter than the sample', async () => {
    const { records } = source(3);
    const out: unknown[] = [];
    for await (const r of checkSourceColumns('orders', spec, mappings, records)) out.push(r.position.index);
    expect(out).toEqual([0, 1, 2]);
  });

  it('throws before yielding anything when the mapped column is missing, and closes the source', async () => {
    const { records, seen } = source(500, 'ordr');
    const out: unknown[] = [];
    await expect(async () => {
      for await (const r of checkSourceColumns('orders', spec, mappings, records)) out.push(r);
    }).rejects.toThrow(/no column .*order.*did you mean "ordr"/s);
    expect(out).toEqual([]);
    expect(seen.closed).toBe(true);
    expect(seen.read).toBeLessThanOrEqual(COLUMN_SAMPLE + 1);
  });

  it('closes the source when the reader stops early, in the sample or after it', async () => {
    for (const stopAt of [5, COLUMN_SAMPLE + 20]) {
      const { records, seen } = source(1000);
      let n = 0;
      for await (const _ of checkSourceColumns('orders', spec, mappings, records)) if (++n === stopAt) break;
      expect(seen.closed).toBe(true);
      expect(seen.read).toBeLessThan(1000);
    }
  });
});
