import { describe, expect, it } from 'vitest';
import { isInCursorRange } from '../../../../src/sync/sources/cursor-filter.ts';
import { BackfillRangeError, splitRange, type RangeChunk } from '../../../../src/sync/read/split-range.ts';

/** Which chunks a cursor value is read by, judged by the sources' own filter. */
function chunksHolding(chunks: RangeChunk[], value: string): number[] {
  return chunks.flatMap((chunk, i) => (isInCursorRange(value, chunk) ? [i] : []));
}

function thrown(fn: () => unknown): BackfillRangeError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BackfillRangeError);
    return err as BackfillRangeError;
  }
  throw new Error('expected splitRange to throw');
}

/** Chunks follow on from each other: each starts exactly where the one before ends. */
function expectContiguous(chunks: RangeChunk[], from: string, to: string): void {
  expect(chunks[0]).toMatchObject({ since: from, sinceInclusive: true });
  expect(chunks.at(-1)?.until).toBe(to);
  chunks.slice(1).forEach((chunk, i) => {
    expect(chunk.sinceInclusive).toBe(false);
    expect(chunk.since).toBe(chunks[i]?.until);
  });
}

describe('splitRange: integers', () => {
  it('puts every integer of [from, to] in exactly one chunk, and nothing outside it in any', () => {
    for (const [from, to] of [
      [1, 3],
      [1, 10],
      [-7, 5],
      [0, 0],
      [100, 349],
      [5, 6],
    ] as const) {
      for (const count of [1, 2, 3, 7, 10, 1000]) {
        const chunks = splitRange(String(from), String(to), count);
        expect(chunks).toHaveLength(Math.min(count, to - from + 1));
        expectContiguous(chunks, String(from), String(to));
        for (let v = from; v <= to; v++) expect(chunksHolding(chunks, String(v))).toHaveLength(1);
        expect(chunksHolding(chunks, String(from - 1))).toEqual([]);
        expect(chunksHolding(chunks, String(to + 1))).toEqual([]);
      }
    }
  });

  it('gives fewer chunks when the range holds fewer values, one value each', () => {
    expect(splitRange('1', '3', 10)).toEqual([
      { since: '1', sinceInclusive: true, until: '1' },
      { since: '1', sinceInclusive: false, until: '2' },
      { since: '2', sinceInclusive: false, until: '3' },
    ]);
  });

  it('balances chunk sizes (they differ by at most one value)', () => {
    const chunks = splitRange('1', '10', 3);
    expect(chunks.map((c) => c.until)).toEqual(['3', '6', '10']);
    const values = Array.from({ length: 10 }, (_, v) => String(v + 1));
    expect(chunks.map((chunk) => values.filter((v) => isInCursorRange(v, chunk)).length)).toEqual([3, 3, 4]);
  });

  it('splits ids past 2^53 exactly', () => {
    const chunks = splitRange('9007199254740990', '9007199254740999', 5);
    expect(chunks.map((c) => c.until)).toEqual([
      '9007199254740991',
      '9007199254740993',
      '9007199254740995',
      '9007199254740997',
      '9007199254740999',
    ]);
    for (let v = 9007199254740990n; v <= 9007199254740999n; v++)
      expect(chunksHolding(chunks, v.toString())).toHaveLength(1);
  });
});

describe('splitRange: decimals', () => {
  it('splits on the decimal places of the input and covers finer values exactly once', () => {
    const chunks = splitRange('0.5', '1.25', 4);
    expect(chunks.map((c) => c.until)).toEqual(['0.68', '0.87', '1.06', '1.25']);
    expectContiguous(chunks, '0.5', '1.25');
    for (let thousandths = 500; thousandths <= 1250; thousandths++) {
      expect(chunksHolding(chunks, (thousandths / 1000).toFixed(3))).toHaveLength(1);
    }
    expect(chunksHolding(chunks, '0.499')).toEqual([]);
    expect(chunksHolding(chunks, '1.251')).toEqual([]);
  });

  it('mixes an integer end with a decimal one, and handles negatives', () => {
    expect(splitRange('-1', '1.0', 4).map((c) => c.until)).toEqual(['-0.5', '0.0', '0.5', '1.0']);
    expect(splitRange('1.0', '1.2', 10).map((c) => c.until)).toEqual(['1.1', '1.2']);
  });
});

describe('splitRange: dates and timestamps', () => {
  it('splits dates on whole days, every day in exactly one chunk, format YYYY-MM-DD', () => {
    const chunks = splitRange('2024-01-01', '2024-03-01', 4);
    expectContiguous(chunks, '2024-01-01', '2024-03-01');
    expect(chunks.map((c) => c.until)).toEqual(['2024-01-15', '2024-01-30', '2024-02-14', '2024-03-01']);
    for (let ms = Date.UTC(2023, 11, 31); ms <= Date.UTC(2024, 2, 2); ms += 86_400_000) {
      const day = new Date(ms).toISOString().slice(0, 10);
      const inRange = day >= '2024-01-01' && day <= '2024-03-01';
      expect(chunksHolding(chunks, day)).toHaveLength(inRange ? 1 : 0);
    }
    expect(splitRange('2024-02-27', '2024-03-01', 10).map((c) => c.until)).toEqual([
      '2024-02-27',
      '2024-02-28',
      '2024-02-29',
      '2024-03-01',
    ]);
  });

  it('splits timestamps by time, in the input format, boundaries read once at microsecond precision', () => {
    const chunks = splitRange('2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z', 4);
    expect(chunks.map((c) => c.until)).toEqual([
      '2024-01-01T06:00:00Z',
      '2024-01-01T12:00:00Z',
      '2024-01-01T18:00:00Z',
      '2024-01-02T00:00:00Z',
    ]);
    const cases: Array<[string, number[]]> = [
      ['2024-01-01T00:00:00Z', [0]],
      ['2024-01-01T05:59:59.999999Z', [0]],
      ['2024-01-01T06:00:00Z', [0]],
      ['2024-01-01T06:00:00.000001Z', [1]],
      ['2024-01-01T12:00:00.000Z', [1]],
      ['2024-01-01T14:00:00+02:00', [1]],
      ['2024-01-01T12:00:00.000001Z', [2]],
      ['2024-01-01T18:00:00Z', [2]],
      ['2024-01-01T23:59:59.999999Z', [3]],
      ['2024-01-02T00:00:00Z', [3]],
      ['2024-01-02T00:00:00.000001Z', []],
    ];
    for (const [at, holders] of cases)
      expect({ at, holders: chunksHolding(chunks, at) }).toEqual({ at, holders });
    expect(chunksHolding(chunks, '2023-12-31T23:59:59.999999Z')).toEqual([]);
  });

  it('keeps a database-style timestamp: space separator, no zone, microseconds', () => {
    const chunks = splitRange('2024-01-01 00:00:00.000001', '2024-01-01 00:00:01.000000', 2);
    expect(chunks.map((c) => c.until)).toEqual(['2024-01-01 00:00:00.500000', '2024-01-01 00:00:01.000000']);
    expect(
      splitRange('2024-01-01 00:00:00.123456', '2024-01-01 00:00:00.123460', 10).map((c) => c.until),
    ).toEqual([
      '2024-01-01 00:00:00.123457',
      '2024-01-01 00:00:00.123458',
      '2024-01-01 00:00:00.123459',
      '2024-01-01 00:00:00.123460',
    ]);
  });

  it('writes boundaries in the offset of --from, and keeps minute precision', () => {
    const chunks = splitRange('2024-01-01T10:00+02:00', '2024-01-01T10:00Z', 4);
    expect(chunks.map((c) => c.until)).toEqual([
      '2024-01-01T10:30+02:00',
      '2024-01-01T11:00+02:00',
      '2024-01-01T11:30+02:00',
      '2024-01-01T10:00Z',
    ]);
    expect(chunksHolding(chunks, '2024-01-01T09:30:00Z')).toEqual([2]);
  });
});

describe('splitRange: text and errors', () => {
  it('reads text as one chunk: it cannot be divided', () => {
    expect(splitRange('a', 'm', 8)).toEqual([{ since: 'a', sinceInclusive: true, until: 'm' }]);
    expect(splitRange('007', '019', 3)).toHaveLength(1);
  });

  it('names --from/--to and what is allowed', () => {
    expect(thrown(() => splitRange('5', '1', 2)).message).toBe(
      '--from 5 is after --to 1; a backfill range runs from the lower cursor value to the higher',
    );
    expect(thrown(() => splitRange('2024-02-01', '2024-01-31', 2)).message).toContain(
      '--from 2024-02-01 is after --to 2024-01-31',
    );
    expect(thrown(() => splitRange('z', 'a', 1)).message).toContain('--from z is after --to a');
    expect(thrown(() => splitRange('1', '2024-01-01', 2)).message).toBe(
      '--from 1 is a number but --to 2024-01-01 is a date (YYYY-MM-DD); both ends of a range must be the same kind of value',
    );
    expect(thrown(() => splitRange('2024-01-01', '2024-01-02T00:00:00Z', 2)).message).toContain(
      'is a date (YYYY-MM-DD) but --to 2024-01-02T00:00:00Z is a timestamp',
    );
    expect(thrown(() => splitRange('2024-01-01T00:00:00Z', '2024-01-02 00:00:00', 2)).message).toContain(
      'give a time zone on both timestamps or on neither',
    );
    expect(thrown(() => splitRange('2024-02-30', '2024-03-01', 2)).message).toBe(
      '--from 2024-02-30 is not a valid calendar date/time',
    );
    expect(thrown(() => splitRange('2024-01-01T00:00:00Z', '2024-01-01T25:00:00Z', 2)).message).toContain(
      '--to 2024-01-01T25:00:00Z',
    );
    expect(thrown(() => splitRange('', '5', 1)).message).toContain('--from is empty');
    expect(thrown(() => splitRange('1', ' ', 1)).message).toContain('--to is empty');
    for (const bad of [0, 1001, 2.5, Number.NaN]) {
      expect(thrown(() => splitRange('1', '9', bad)).message).toBe(
        `chunks must be a whole number from 1 to 1000, got ${String(bad)}`,
      );
    }
    expect(thrown(() => splitRange('1', '9', 0)).code).toBe('BACKFILL_RANGE_INVALID');
  });
});
