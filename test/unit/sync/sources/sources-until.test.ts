import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCursorFilter } from '../../../../src/sync/sources/cursor-filter.ts';
import { createSource } from '../../../../src/sync/sources/create-source.ts';
import type { SourceDeps, WorksheetReadQuery } from '../../../../src/sync/sources/source-deps.ts';
import type { SourceSpec } from '../../../../src/sync/sources/source-spec.ts';
import { splitRange } from '../../../../src/sync/read/split-range.ts';
import type { NormalisedRow } from '../../../../src/api/types.ts';
import { collect, createTempDir, rejection } from '../../../fixtures/sources/source-test-kit.ts';

describe('createCursorFilter with until', () => {
  it('reads up to and including until, ties at it too', () => {
    const keep = createCursorFilter('2024-01-01T00:00:00Z', 'at', { until: '2024-01-02T00:00:00Z' });
    expect(keep({ at: '2024-01-01T00:00:00Z' })).toEqual({ keep: false, cursor: '2024-01-01T00:00:00Z' });
    expect(keep({ at: '2024-01-01T00:00:00.000001Z' }).keep).toBe(true);
    expect(keep({ at: '2024-01-02T00:00:00Z' })).toEqual({ keep: true, cursor: '2024-01-02T00:00:00Z' });
    expect(keep({ at: '2024-01-02 00:00:00.000000Z' }).keep).toBe(true);
    expect(keep({ at: '2024-01-02T00:00:00.000001Z' }).keep).toBe(false);
  });

  it('with sinceInclusive reads since itself; without since, everything up to until', () => {
    const first = createCursorFilter('10', 'id', { sinceInclusive: true, until: '20' });
    expect([9, 10, 15, 20, 21].map((id) => first({ id }).keep)).toEqual([false, true, true, true, false]);
    const open = createCursorFilter(undefined, 'id', { until: 20 });
    expect([-5, 0, 20, 21].map((id) => open({ id }).keep)).toEqual([true, true, true, false]);
  });

  it('skips records without a cursor value in a range, but keeps them in an ordinary incremental read', () => {
    const range = createCursorFilter('1', 'id', { until: '9' });
    expect([range({}), range({ id: null }), range({ id: '' })]).toEqual([
      { keep: false },
      { keep: false },
      { keep: false },
    ]);
    expect(createCursorFilter('1', 'id')({ id: null })).toEqual({ keep: true });
  });

  it('refuses a range without a cursor field, naming the source and incremental.cursor', () => {
    let err: unknown;
    try {
      createCursorFilter(undefined, undefined, { until: '9' }, 'csv source orders.csv');
    } catch (caught) {
      err = caught;
    }
    expect(err).toMatchObject({ code: 'SOURCE_CONFIG' });
    expect((err as Error).message).toBe(
      'csv source orders.csv: reading a range of cursor values (a backfill with --from/--to) needs incremental.cursor in the job: without a cursor field no record can be placed in the range',
    );
    expect(createCursorFilter(undefined, undefined, {})({ v: 1 })).toEqual({ keep: true });
  });
});

describe('file sources with a range', () => {
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  // ids 0..21 with three records on each of 4, 8 and 12, plus two records without an id.
  const ids = [...Array.from({ length: 22 }, (_, i) => i), 4, 4, 8, 8, 12, 12];
  const records = [...ids.map((id, n) => ({ id, n })), { n: 100 }, { id: null, n: 101 }];
  const inRange = records.filter((r) => typeof r.id === 'number' && r.id >= 1 && r.id <= 12).map((r) => r.n);
  const specs = (): SourceSpec[] => [
    { type: 'ndjson', path: 'r.ndjson' },
    { type: 'json', path: 'r.json', itemsPath: 'data' },
    { type: 'csv', path: 'r.csv' },
  ];

  beforeAll(async () => {
    tmp = await createTempDir('until');
    await tmp.write('r.ndjson', records.map((r) => JSON.stringify(r)).join('\n'));
    await tmp.write('r.json', JSON.stringify({ data: records }));
    await tmp.write('r.csv', `id,n\n${records.map((r) => `${r.id ?? ''},${r.n}`).join('\n')}\n`);
  });
  afterAll(() => tmp.remove());

  const read = async (spec: SourceSpec, extra: Partial<SourceDeps>): Promise<number[]> =>
    (await collect(createSource(spec, { env: {}, baseDir: tmp.dir, cursorField: 'id', ...extra }))).map(
      (item) => Number(item.data.n),
    );

  it('chunks of a backfill read every record in [from, to] exactly once, ties at chunk edges included', async () => {
    for (const spec of specs()) {
      for (const count of [1, 3, 4, 12, 50]) {
        const seen: number[] = [];
        for (const chunk of splitRange('1', '12', count)) seen.push(...(await read(spec, chunk)));
        expect({ type: spec.type, count, seen: seen.sort((a, b) => a - b) }).toEqual({
          type: spec.type,
          count,
          seen: inRange,
        });
      }
    }
  });

  it('a range without incremental.cursor fails before reading, naming the file', async () => {
    for (const spec of specs()) {
      const err = await rejection(
        collect(
          createSource(spec, { env: {}, baseDir: tmp.dir, since: '1', sinceInclusive: true, until: '12' }),
        ),
      );
      expect(err.code).toBe('SOURCE_CONFIG');
      expect(err.message).toContain(`${spec.type} source r.${spec.type}: reading a range`);
      expect(err.message).toContain('needs incremental.cursor');
    }
  });

  it('the http source refuses a range without a cursor field before sending any request', async () => {
    // Port 9 (discard) is closed here: reaching the network would fail with another error.
    const err = await rejection(
      collect(
        createSource(
          { type: 'http', url: 'http://127.0.0.1:9/items' },
          { env: {}, baseDir: '/', until: '5', httpRetry: { retries: 0 } },
        ),
      ),
    );
    expect(err.code).toBe('SOURCE_CONFIG');
    expect(err.message).toContain('http source: reading a range');
  });
});

describe('worksheet source with a range', () => {
  const rows: NormalisedRow[] = [
    { id: 'r1', values: { seq: '3' }, updatedAt: new Date('2024-01-01T00:00:00.000Z'), system: {} },
    { id: 'r2', values: { seq: '12' }, updatedAt: new Date('2024-02-01T00:00:00.000Z'), system: {} },
    { id: 'r3', values: { seq: '12' }, updatedAt: new Date('2024-03-01T00:00:00.000Z'), system: {} },
    { id: 'r4', values: {}, system: {} },
  ];
  const readWorksheetRows = async function* (query: WorksheetReadQuery): AsyncGenerator<NormalisedRow> {
    await Promise.resolve(query);
    yield* rows;
  };
  const read = async (extra: Partial<SourceDeps>) =>
    (
      await collect(
        createSource(
          { type: 'worksheet', worksheet: 'w' },
          { env: {}, baseDir: '/', readWorksheetRows, ...extra },
        ),
      )
    ).map((i) => i.position.id);

  it('bounds rows by updatedAt, inclusive at both ends of a first chunk, and skips rows without one', async () => {
    expect(
      await read({ since: '2024-01-01T00:00:00Z', sinceInclusive: true, until: '2024-02-01T00:00:00Z' }),
    ).toEqual(['r1', 'r2']);
    expect(await read({ since: '2024-01-01T00:00:00Z', until: '2024-02-01T00:00:00Z' })).toEqual(['r2']);
    expect(await read({ until: '2024-02-15' })).toEqual(['r1', 'r2']);
  });

  it('bounds rows by the cursor field, ties at until included', async () => {
    expect(await read({ cursorField: 'seq', since: '3', until: '12' })).toEqual(['r2', 'r3']);
    expect(await read({ cursorField: 'seq', since: '3', sinceInclusive: true, until: '11' })).toEqual(['r1']);
  });
});
