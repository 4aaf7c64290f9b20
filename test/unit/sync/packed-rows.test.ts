import { describe, expect, it } from 'vitest';
import type { BatchRow } from '../../../src/sync/batch-row.ts';
import {
  BATCH_ROWS_FORMAT,
  batchJobRows,
  batchRowIndexes,
  batchRows,
  packRows,
  unpackRows,
  UnreadableBatchError,
} from '../../../src/sync/packed-rows.ts';
import type { PackedRows } from '../../../src/sync/packed-rows.ts';
import { orderRow, readRows } from '../../helpers/batch-rows.ts';
import { seededRandom } from '../../helpers/seeded-random.ts';

/** What a batch job's rows became before the packing: objects through one JSON round trip. */
const asObjectsDid = (rows: BatchRow[]): unknown => JSON.parse(JSON.stringify(rows));
/** The orders rows' columns, by field: what a plan says each field is read from. */
const ORDER_SOURCES = ['order', 'customer', 'amount', 'status', 'date'];
const throughRedis = (rows: BatchRow[], sources: Array<string | undefined> = ORDER_SOURCES): BatchRow[] =>
  unpackRows(JSON.parse(JSON.stringify(packRows(rows, sources))) as PackedRows);

const csvRow = (index: number, order: string): BatchRow => orderRow(index, order);

describe('packRows / unpackRows', () => {
  it('gives back CSV rows as the objects did', () => {
    const rows = Array.from({ length: 50 }, (_, i) => csvRow(i * 3, `SO-${i}`));
    expect(throughRedis(rows)).toEqual(asObjectsDid(rows));
  });

  it('keeps what only some rows have: page, id, cursor, write types, pending lookups, odd keys', () => {
    const rows = [csvRow(0, 'A'), csvRow(1, 'B'), csvRow(2, 'C'), csvRow(3, 'D'), csvRow(4, 'E')];
    rows[0]!.source.position = { index: 0, page: 'p2', id: 'src-17' };
    rows[0]!.mapped.position = rows[0]!.source.position;
    rows[1]!.source.cursor = '2024-03-01T10:00:00Z';
    rows[1]!.mapped.fields[3] = { id: 'f-status', value: 'New option', type: '2' };
    rows[2]!.mapped.pending = [{ index: 1, values: ['ann@example.com', 'bob@example.com'] }];
    rows[2]!.mapped.fields[1] = { id: 'f-customer', value: ['ann@example.com', 'bob@example.com'] };
    // A record with a column more (JSON sources), one with a nested value and a null.
    rows[3]!.source.data = { ...rows[3]!.source.data, extra: { nested: [1, 2] } };
    rows[4]!.source.data = { order: 'E', customer: null, amount: 3, status: true, date: '' };
    delete rows[4]!.mapped.key;
    const back = throughRedis(rows);
    expect(back).toEqual(asObjectsDid(rows));
    expect(back[0]!.source.position).toEqual({ index: 0, page: 'p2', id: 'src-17' });
    expect(back[1]!.source.cursor).toBe('2024-03-01T10:00:00Z');
    expect(back[1]!.mapped.fields[3]).toEqual({ id: 'f-status', value: 'New option', type: '2' });
    expect(back[0]!.mapped.fields[3]).toEqual({ id: 'f-status', value: 'opt-shipped' });
    expect(back[0]!.mapped.fields[3]).not.toHaveProperty('type');
    expect(back[2]!.mapped.pending).toEqual([{ index: 1, values: ['ann@example.com', 'bob@example.com'] }]);
    expect(back[3]!.source.data.extra).toEqual({ nested: [1, 2] });
    expect(back[4]!.source.data.customer).toBeNull();
    expect(back[4]!.mapped).not.toHaveProperty('key');
  });

  it('keeps a missing data key missing and an undefined field value undefined', () => {
    const rows = [csvRow(0, 'A'), csvRow(1, 'B')];
    rows[1]!.source.data = { ...rows[1]!.source.data, customer: undefined };
    rows[1]!.mapped.fields[2] = { id: 'f-amount', value: undefined };
    const back = throughRedis(rows);
    expect(Object.keys(back[1]!.source.data)).toEqual(['order', 'amount', 'status', 'date']);
    expect(back[1]!.mapped.fields[2]!.value).toBeUndefined();
    // Sent to the platform, the field carries no value, as before; never a null that clears it.
    expect(JSON.stringify(back[1]!.mapped.fields[2])).toBe('{"id":"f-amount"}');
  });

  it('round-trips random rows of mixed shapes exactly as the objects did', () => {
    const next = seededRandom(7);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
    const values = [
      '',
      'x',
      'a "quoted", value',
      0,
      -1.5,
      null,
      true,
      false,
      [1, 'b'],
      { k: 'v' },
      '2024-01-01',
    ];
    const rows: BatchRow[] = Array.from({ length: 300 }, (_, i) => {
      const columns =
        next() < 0.8 ? ['a', 'b', 'c'] : pick([['a', 'c'], ['c', 'b', 'a'], ['a', 'b', 'c', 'd'], []]);
      const data = Object.fromEntries(columns.map((c) => [c, pick(values)]));
      const position = next() < 0.5 ? { index: i, line: i + 1 } : { index: i };
      // Fields read from columns a and b: often their very value, sometimes another.
      const fields = ['f1', 'f2'].map((id, f) => {
        const value = next() < 0.5 ? data[f === 0 ? 'a' : 'b'] : pick(values);
        return next() < 0.2 ? { id, value, type: pick(['0', '1', '2']) } : { id, value };
      });
      const row: BatchRow = {
        index: i,
        source: next() < 0.3 ? { data, position, cursor: pick(values) } : { data, position },
        mapped: { ok: true, fields, hash: next() < 0.5 ? '' : 'h' + String(i), position },
      };
      if (next() < 0.7) row.mapped.key = `k${i}`;
      return row;
    });
    expect(throughRedis(rows, ['a', 'b'])).toEqual(asObjectsDid(rows));
    expect(throughRedis(rows, ['b', undefined])).toEqual(asObjectsDid(rows));
    expect(throughRedis(rows, [])).toEqual(asObjectsDid(rows));
    expect(throughRedis([])).toEqual([]);
  });

  it('writes a job of 1,000 CSV rows in well under half the bytes of the objects, text values once', () => {
    const rows = Array.from({ length: 1000 }, (_, i) => csvRow(i, `SO-${String(i).padStart(8, '0')}`));
    const objects = JSON.stringify(rows).length;
    const plain = JSON.stringify(packRows(rows)).length;
    const packed = JSON.stringify(packRows(rows, ORDER_SOURCES)).length;
    expect(plain / objects).toBeLessThan(0.4);
    // Order and customer are the source's own text: each written once, not twice.
    expect(plain - packed).toBeGreaterThan(1000 * ('SO-00000000'.length + 'Acme, Inc'.length));
    expect(JSON.stringify(packRows(rows, ORDER_SOURCES))).not.toContain('"SO-00000007","Acme, Inc",12.5');
  });

  it('writes a value once only when it is the very text of the column the field is read from', () => {
    const row = csvRow(0, 'A');
    row.source.data = { order: 'A', customer: '12.50', amount: '12.50', status: 'x', date: 'd' };
    row.mapped.fields[1] = { id: 'f-customer', value: 'A' };
    const packed = packRows([row], ORDER_SOURCES);
    // order: same text (left out); customer: another column's text (kept); amount: a number (kept).
    expect(packed.rows[0]![5]).toEqual([0, 'A', 12.5, 'opt-shipped', '2024-02-01']);
    expect(packed.rows[0]![6]).toBe(1);
    expect(throughRedis([row])).toEqual(asObjectsDid([row]));
  });

  it('writes out every value of fields past the 31st', () => {
    const ids = Array.from({ length: 40 }, (_, f) => `f${f}`);
    const data = Object.fromEntries(ids.map((id) => [id, `v-${id}`]));
    const position = { index: 0, line: 2 };
    const row: BatchRow = {
      index: 0,
      source: { data, position },
      mapped: { ok: true, fields: ids.map((id) => ({ id, value: `v-${id}` })), hash: '', position },
    };
    const packed = packRows([row], ids);
    expect(packed.rows[0]![6]).toBe(2 ** 31 - 1);
    expect(packed.rows[0]![5].slice(31)).toEqual(ids.slice(31).map((id) => `v-${id}`));
    expect(throughRedis([row], ids)).toEqual(asObjectsDid([row]));
  });

  it('lists the row indexes of either form for summaries', () => {
    const rows = [csvRow(4, 'A'), csvRow(9, 'B')];
    expect(batchRowIndexes({ packed: packRows(rows) })).toEqual([4, 9]);
    expect(batchRowIndexes({ rows })).toEqual([4, 9]);
    expect(batchRowIndexes({})).toBeUndefined();
  });

  it('reads the rows of every format it knows, and refuses a newer one or none rather than reading no rows', () => {
    const rows = [csvRow(4, 'A'), csvRow(9, 'B')];
    const stored = <T>(data: T): T => JSON.parse(JSON.stringify(data)) as T;
    const expected = asObjectsDid(rows);
    expect(BATCH_ROWS_FORMAT).toBe(4);
    // What this version adds (4 for regular rows), format 3 (columns as arrays, what the
    // version before added), format 2 with and without the field, objects.
    const added = batchJobRows(rows, ORDER_SOURCES);
    expect(added.format).toBe(4);
    expect(readRows(batchRows(stored(added)))).toEqual(expected);
    const asArrays = (c: unknown): unknown =>
      typeof c === 'object' && c !== null && 'j' in c ? (c as { j: string }).j.split('\u007f') : c;
    const columnar = added.format === 4 ? added.columnar : undefined;
    const format3 = {
      format: 3,
      packed: null,
      columnar: {
        ...columnar!,
        values: columnar!.values.map(asArrays),
        fields: columnar!.fields.map(asArrays),
      },
    };
    expect(JSON.stringify(format3)).not.toContain('"j"');
    expect(readRows(batchRows(stored(format3)))).toEqual(expected);
    expect(batchRows(stored({ format: 2, packed: packRows(rows, ORDER_SOURCES) }))).toEqual(expected);
    expect(batchRows(stored({ packed: packRows(rows, ORDER_SOURCES) }))).toEqual(expected);
    expect(batchRows(stored({ rows }))).toEqual(expected);
    expect(batchRows({ rows: [] })).toEqual([]);
    // A newer rowbridge's rows, whatever field they are in: refused, naming what to do.
    const newerData: Record<string, unknown> = { format: 5, packed: packRows(rows), columnar: added };
    const newer = () => batchRows(newerData);
    expect(newer).toThrow(UnreadableBatchError);
    expect(newer).toThrow(/format 5, newer than this worker reads \(4\).*upgrade every worker/);
    const unknownData: Record<string, unknown> = { columnar2: 'x' };
    expect(() => batchRows(unknownData)).toThrow(/no rows this worker can read.*fields columnar2/);
    expect(() => batchRows({ format: 2, rows })).toThrow(UnreadableBatchError);
    expect(() => batchRows({ format: 3, packed: packRows(rows) })).toThrow(UnreadableBatchError);
    expect(() => batchRows({ packed: { rows: 'x' } })).toThrow(UnreadableBatchError);
  });

  it('writes irregular rows in format 2, and format 4 so that a worker before the format check fails on it', () => {
    const rows = [csvRow(0, 'A'), csvRow(1, 'B')];
    rows[1]!.source.cursor = '2024-03-01';
    const irregular = batchJobRows(rows, ORDER_SOURCES);
    expect(irregular.format).toBe(2);
    expect(batchRows(JSON.parse(JSON.stringify(irregular)) as typeof irregular)).toEqual(asObjectsDid(rows));
    // Such a worker read `packed` whenever it was not undefined: null stops it before any write.
    const regular = JSON.parse(JSON.stringify(batchJobRows([csvRow(0, 'A')], ORDER_SOURCES))) as {
      packed: PackedRows;
    };
    expect(regular.packed).toBeNull();
    expect(() => unpackRows(regular.packed)).toThrow(TypeError);
    expect(batchRowIndexes(regular)).toEqual([0]);
  });
});
