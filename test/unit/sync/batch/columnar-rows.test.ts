import { describe, expect, it } from 'vitest';
import type { BatchRow } from '../../../../src/sync/batch/batch-row.ts';
import { packColumns } from '../../../../src/sync/batch/pack-columns.ts';
import { unpackColumns } from '../../../../src/sync/batch/unpack-columns.ts';
import type { ColumnarRows } from '../../../../src/sync/batch/columnar-rows.ts';
import { orderRow, readRows } from '../../../helpers/batch-rows.ts';
import { seededRandom } from '../../../helpers/seeded-random.ts';

/** What a batch job's rows became as objects: one JSON round trip (the oracle). */
const asObjectsDid = (rows: BatchRow[]): unknown => JSON.parse(JSON.stringify(rows));
const SOURCES = ['order', 'customer', 'amount', 'status', 'date'];
const throughRedis = (rows: BatchRow[], sources: Array<string | undefined> = SOURCES): BatchRow[] => {
  const packed = packColumns(rows, sources);
  return readRows(unpackColumns(JSON.parse(JSON.stringify(packed)) as ColumnarRows));
};

const csvRow = (index: number, order: string, status = 'opt-shipped'): BatchRow =>
  orderRow(index, order, { status: [status], key: null, hash: '' });

describe('packColumns / unpackColumns (the rows of a batch job)', () => {
  it('gives back CSV rows as the objects did, in less than half their bytes', () => {
    const rows = Array.from({ length: 1000 }, (_, i) =>
      csvRow(2000 + i, `SO-${2000 + i}`, ['opt-a', 'opt-b', 'opt-c'][i % 3]),
    );
    const packed = packColumns(rows, SOURCES);
    expect(throughRedis(rows)).toEqual(asObjectsDid(rows));
    // Consecutive indexes, lines at a constant distance, no key, one hash: once each.
    expect(packed).toMatchObject({ n: 1000, first: 2000, lineOffset: 2, hash: '' });
    expect(packed).not.toHaveProperty('indexes');
    expect(packed).not.toHaveProperty('lines');
    expect(packed).not.toHaveProperty('keys');
    // Text equal to its column is that column; single ids are indexes into the distinct ones.
    expect(packed.fields[0]).toEqual({ c: 0 });
    expect(packed.fields[1]).toEqual({ c: 1 });
    expect(packed.fields[3]).toEqual({ d: ['opt-a', 'opt-b', 'opt-c'], r: expect.any(Array) as unknown });
    expect(packed.fields[2]).toHaveLength(1000);
    const columnarBytes = JSON.stringify(packed).length;
    expect(columnarBytes).toBeLessThan(0.5 * JSON.stringify(rows).length);
    expect(packed).not.toHaveProperty('extras');
  });

  it('joins a column of strings into one, unless a value holds the separator (DEL) or is not a string', () => {
    const rows = [csvRow(0, ''), csvRow(1, 'B'), csvRow(2, '')];
    rows[1]!.source.data.customer = 'Acme\u007fInc';
    rows[2]!.source.data.amount = 12.5;
    const packed = packColumns(rows, SOURCES);
    expect(packed.values[0]).toEqual({ j: '\u007fB\u007f' });
    expect(packed.values[1]).toEqual(['Acme, Inc', 'Acme\u007fInc', 'Acme, Inc']);
    expect(packed.values[2]).toEqual(['12.50', '12.50', 12.5]);
    expect(throughRedis(rows)).toEqual(asObjectsDid(rows));
    // A joined column that does not hold the job's row count is refused before any write.
    const short = { ...packed, values: [{ j: 'A\u007fB' }, ...packed.values.slice(1)] };
    expect(() => unpackColumns(short)).toThrow(/joined column holds fewer than its 3 values/);
    const long = { ...packed, values: [{ j: 'A\u007fB\u007fC\u007fD' }, ...packed.values.slice(1)] };
    expect(() => unpackColumns(long)).toThrow(/joined column holds more than its 3 values/);
  });

  it('keeps keys, hashes, gaps in the indexes and lines that are not at one distance', () => {
    const rows = [csvRow(5, 'A'), csvRow(9, 'B'), csvRow(10, 'C')];
    rows[0]!.mapped.key = 'A';
    rows[0]!.mapped.hash = 'h1';
    rows[1]!.mapped.hash = 'h2';
    rows[2]!.mapped.key = '';
    rows[2]!.source.position = { index: 10 };
    rows[2]!.mapped.position = rows[2]!.source.position;
    rows[1]!.mapped.fields[3] = { id: 'f-status', value: ['x', 'y'] };
    const packed = packColumns(rows, SOURCES);
    expect(packed.indexes).toEqual([5, 9, 10]);
    expect(packed.lines).toEqual([7, 11, null]);
    expect(packed.keys).toEqual(['A', null, '']);
    expect(packed.hash).toEqual(['h1', 'h2', '']);
    expect(Array.isArray(packed.fields[3])).toBe(true);
    const back = throughRedis(rows);
    expect(back).toEqual(asObjectsDid(rows));
    expect(back[1]!.mapped).not.toHaveProperty('key');
    expect(back[2]!.mapped.key).toBe('');
    expect(back[2]!.source.position).toEqual({ index: 10 });
  });

  it('carries what only some rows have (page, id, cursor, write types, pending lookups, undefined, odd keys) as the objects did', () => {
    const cases: Array<[string, (row: BatchRow) => void]> = [
      ['a page', (r) => (r.source.position.page = 2)],
      ['a source id', (r) => (r.source.position.id = 'src-1')],
      ['a cursor', (r) => (r.source.cursor = '2024-03-01')],
      ['a write type', (r) => (r.mapped.fields[3] = { id: 'f-status', value: 'x', type: '2' })],
      ['pending lookups', (r) => (r.mapped.pending = [{ index: 1, values: ['a@example.com'] }])],
      ['an undefined value', (r) => (r.mapped.fields[2] = { id: 'f-amount', value: undefined })],
      ['other field ids', (r) => (r.mapped.fields[0] = { id: 'f-other', value: 'A' })],
      ['a field less', (r) => r.mapped.fields.pop()],
      ['a column more', (r) => (r.source.data = { ...r.source.data, extra: 1 })],
      ['a column undefined', (r) => (r.source.data = { ...r.source.data, amount: undefined })],
      ['columns in another order', (r) => (r.source.data = { customer: 'x', ...r.source.data })],
    ];
    for (const [what, change] of cases) {
      const rows = [csvRow(0, 'A'), csvRow(1, 'B'), csvRow(2, 'C')];
      change(rows[1]!);
      const back = throughRedis(rows);
      expect(back, what).toEqual(asObjectsDid(rows));
      expect(Object.keys(packColumns(rows, SOURCES).extras ?? {}), what).toEqual(['1']);
      // What writing reads of the row on its own is what its mapping says.
      const [view] = unpackColumns(
        JSON.parse(JSON.stringify(packColumns(rows, SOURCES))) as ColumnarRows,
      ).slice(1);
      expect(view!.fields, what).toEqual(rows[1]!.mapped.fields.map((f) => ({ ...f })));
      expect(view!.pending, what).toEqual(rows[1]!.mapped.pending);
      expect(view!.position, what).toEqual(rows[1]!.source.position);
    }
    expect(unpackColumns(packColumns([], SOURCES))).toEqual([]);
  });

  it('round-trips random regular rows exactly as the objects did', () => {
    const next = seededRandom(11);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
    const texts = [
      '',
      'x',
      'Müller, Hans',
      'O\'Brien "Paddy"',
      '日本語',
      'a\nb',
      '0',
      'null',
      ' spaced ',
      'del\u007fin',
    ];
    const anyValue = (): unknown =>
      pick<() => unknown>([
        () => pick(texts),
        () => Math.round(next() * 1e6) / 100,
        () => null,
        () => next() < 0.5,
        () => [pick(texts)],
        () => [pick(texts), pick(texts)],
        () => ({ nested: pick(texts) }),
      ])();
    const encodings = new Set<string>();
    for (let round = 0; round < 60; round++) {
      const n = 1 + Math.floor(next() * 40);
      const columns = Array.from({ length: 1 + Math.floor(next() * 5) }, (_, c) => `col ${c}`);
      const sources = Array.from({ length: 1 + Math.floor(next() * 6) }, () =>
        next() < 0.7 ? pick(columns) : undefined,
      );
      const start = Math.floor(next() * 1000);
      const keyed = next() < 0.5;
      // Each field the same way in every row (so that each encoding is used), or mixed.
      const modes = sources.map(() => pick(['copy', 'ids', 'texts', 'mixed'] as const));
      const rows: BatchRow[] = Array.from({ length: n }, (_, i) => {
        const index = next() < 0.9 ? start + i : start + i + 7 * n;
        const position = next() < 0.9 ? { index, line: index + 2 } : { index };
        const data: Record<string, unknown> = {};
        for (const c of columns) data[c] = next() < 0.8 ? pick(texts) : anyValue();
        const fields = sources.map((from, f) => ({
          id: `f${f}`,
          value:
            modes[f] === 'copy' && from !== undefined
              ? data[from]
              : modes[f] === 'ids'
                ? [pick(texts)]
                : modes[f] === 'texts'
                  ? pick(texts)
                  : from !== undefined && next() < 0.7
                    ? data[from]
                    : anyValue(),
        }));
        const row: BatchRow = {
          index,
          source: { data, position },
          mapped: { ok: true, fields, hash: keyed ? `h${i}` : '', position },
        };
        if (keyed && next() < 0.9) row.mapped.key = `K-${index}`;
        return row;
      });
      expect(throughRedis(rows, sources), `round ${round}`).toEqual(asObjectsDid(rows));
      const packed = packColumns(rows, sources);
      for (const field of packed.fields)
        encodings.add(
          Array.isArray(field) ? 'values' : 'j' in field ? 'joined' : 'c' in field ? 'column' : 'ids',
        );
      for (const column of packed.values)
        encodings.add(Array.isArray(column) ? 'column values' : 'joined column');
    }
    expect([...encodings].sort()).toEqual([
      'column',
      'column values',
      'ids',
      'joined',
      'joined column',
      'values',
    ]);
  });
});
