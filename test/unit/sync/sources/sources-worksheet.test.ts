import { describe, expect, it } from 'vitest';
import { createSource } from '../../../../src/sync/sources/create-source.ts';
import { cursorCap } from '../../../../src/sync/sources/cursor-cap.ts';
import type { WorksheetReadQuery } from '../../../../src/sync/sources/source-deps.ts';
import type { NormalisedRow } from '../../../../src/api/types.ts';
import { collect, rejection } from '../../../fixtures/sources/source-test-kit.ts';

/** ROWBRIDGE_CURSOR_MARGIN_SECONDS's default. */
const MARGIN_MS = 5_000;

const rows: NormalisedRow[] = [
  {
    id: 'r1',
    values: { name: 'A', seq: '3' },
    createdAt: new Date('2023-12-31T23:00:00.000Z'),
    updatedAt: new Date('2024-01-01T00:00:00.000Z'),
    createdBy: { accountId: 'acc-1', fullname: 'Ada Admin' },
    owner: { accountId: 'acc-2', fullname: 'Ben Sales' },
    system: { _autoId: 7 },
  },
  { id: 'r2', values: { name: 'B', seq: '12' }, updatedAt: new Date('2024-02-01T00:00:00.000Z'), system: {} },
  { id: 'r3', values: { name: 'C' }, system: {} },
];

function reader(seen: WorksheetReadQuery[]) {
  return async function* (query: WorksheetReadQuery): AsyncGenerator<NormalisedRow> {
    seen.push(query);
    await Promise.resolve();
    yield* rows;
  };
}

describe('worksheet source', () => {
  it('passes the query through and maps rows to records with the row id and updatedAt cursor', async () => {
    const seen: WorksheetReadQuery[] = [];
    const filter = { type: 'condition', field: 'name', operator: 'eq', value: 'A' } as const;
    const items = await collect(
      createSource(
        {
          type: 'worksheet',
          worksheet: 'orders',
          view: 'v1',
          filter,
          fields: ['name'],
          credentialsEnvPrefix: 'OTHER_',
        },
        { env: {}, baseDir: '/', readWorksheetRows: reader(seen) },
      ),
    );
    expect(seen).toEqual([
      { worksheet: 'orders', view: 'v1', filter, fields: ['name'], credentialsEnvPrefix: 'OTHER_' },
    ]);
    const none = { _createdAt: null, _createdBy: null, _updatedBy: null, _owner: null };
    expect(items).toEqual([
      {
        data: {
          name: 'A',
          seq: '3',
          rowid: 'r1',
          _id: 'r1',
          _autoId: 7,
          _createdAt: '2023-12-31T23:00:00.000Z',
          _updatedAt: '2024-01-01T00:00:00.000Z',
          _createdBy: 'Ada Admin',
          _updatedBy: null,
          _owner: 'Ben Sales',
        },
        position: { index: 0, id: 'r1', idColumn: 'rowid' },
        cursor: '2024-01-01T00:00:00.000Z',
      },
      {
        data: {
          name: 'B',
          seq: '12',
          rowid: 'r2',
          _id: 'r2',
          ...none,
          _updatedAt: '2024-02-01T00:00:00.000Z',
        },
        position: { index: 1, id: 'r2', idColumn: 'rowid' },
        cursor: '2024-02-01T00:00:00.000Z',
      },
      {
        data: { name: 'C', rowid: 'r3', _id: 'r3', ...none, _updatedAt: null },
        position: { index: 2, id: 'r3', idColumn: 'rowid' },
      },
    ]);
  });

  it('hands over the system fields as user objects with values: raw', async () => {
    const items = await collect(
      createSource(
        { type: 'worksheet', worksheet: 'w', values: 'raw' },
        { env: {}, baseDir: '/', readWorksheetRows: reader([]) },
      ),
    );
    expect(items[0]?.data).toMatchObject({ _owner: { accountId: 'acc-2', fullname: 'Ben Sales' } });
  });

  it('with since reads only rows past it, by updatedAt or by the cursor field', async () => {
    const byTime = await collect(
      createSource(
        { type: 'worksheet', worksheet: 'w' },
        { env: {}, baseDir: '/', since: '2024-01-15T00:00:00Z', readWorksheetRows: reader([]) },
      ),
    );
    expect(byTime.map((i) => i.position.id)).toEqual(['r2', 'r3']);
    const byField = await collect(
      createSource(
        { type: 'worksheet', worksheet: 'w' },
        { env: {}, baseDir: '/', since: '4', cursorField: 'seq', readWorksheetRows: reader([]) },
      ),
    );
    expect(byField.map((i) => [i.position.id, i.cursor])).toEqual([
      ['r2', '12'],
      ['r3', undefined],
    ]);
  });

  it('with capCursorAtScanStart reports no _updatedAt cursor past the scan start less the margin', async () => {
    const now = Date.now();
    const recent: NormalisedRow[] = [
      { id: 'old', values: {}, updatedAt: new Date(now - 10 * 60_000), system: {} },
      { id: 'new', values: {}, updatedAt: new Date(now - 1_000), system: {} },
    ];
    const read = async function* (): AsyncGenerator<NormalisedRow> {
      await Promise.resolve();
      yield* recent;
    };
    const capped = await collect(
      createSource(
        { type: 'worksheet', worksheet: 'w' },
        { env: {}, baseDir: '/', capCursorAtScanStart: true, readWorksheetRows: read },
      ),
    );
    const ceiling = Date.parse(capped[1]!.cursor as string);
    expect(capped[0]!.cursor).toBe(recent[0]!.updatedAt!.toISOString());
    // Taken when the scan started: at most now less the margin, and not much before.
    expect(ceiling).toBeLessThanOrEqual(Date.now() - MARGIN_MS);
    expect(ceiling).toBeGreaterThanOrEqual(now - MARGIN_MS - 1000);
    // The row's own time is still handed over; a source without the flag (append) reports it.
    expect(capped[1]!.data._updatedAt).toBe(recent[1]!.updatedAt!.toISOString());
    const asRead = await collect(
      createSource({ type: 'worksheet', worksheet: 'w' }, { env: {}, baseDir: '/', readWorksheetRows: read }),
    );
    expect(asRead.map((i) => i.cursor)).toEqual(recent.map((r) => r.updatedAt!.toISOString()));
    // A read resumed after a crash gives its first attempt's start: no cursor past it.
    const firstAttempt = now - 5 * 60_000;
    const resumed = await collect(
      createSource(
        { type: 'worksheet', worksheet: 'w' },
        {
          env: {},
          baseDir: '/',
          capCursorAtScanStart: true,
          scanStartedAt: firstAttempt,
          readWorksheetRows: read,
        },
      ),
    );
    const resumedCeiling = new Date(cursorCap(firstAttempt, MARGIN_MS)).toISOString();
    expect(resumed.map((i) => i.cursor)).toEqual([recent[0]!.updatedAt!.toISOString(), resumedCeiling]);
    // A cursor on a field of the job's own is reported as read.
    const byField = await collect(
      createSource(
        { type: 'worksheet', worksheet: 'w' },
        {
          env: {},
          baseDir: '/',
          capCursorAtScanStart: true,
          cursorField: 'seq',
          readWorksheetRows: reader([]),
        },
      ),
    );
    expect(byField.map((i) => i.cursor)).toEqual(['3', '12', undefined]);
  });

  it("with capCursorAtScanStart caps on the platform's clock its reader tells, less ROWBRIDGE_CURSOR_MARGIN_SECONDS", async () => {
    const now = Date.now();
    const platformAhead = 30_000;
    const rows: NormalisedRow[] = [
      { id: 'edited', values: {}, updatedAt: new Date(now + platformAhead - 1_000), system: {} },
    ];
    // The reader tells the platform's time (30 s behind, or ahead of, this machine) before the first page.
    const readAt = (offset: number) =>
      async function* (query: WorksheetReadQuery): AsyncGenerator<NormalisedRow> {
        await Promise.resolve();
        query.onScanStart?.(Date.now() + offset);
        yield* rows;
      };
    const read = (offset: number, extra: { scanStartedAt?: number; env?: NodeJS.ProcessEnv } = {}) =>
      collect(
        createSource(
          { type: 'worksheet', worksheet: 'w' },
          {
            env: extra.env ?? {},
            baseDir: '/',
            capCursorAtScanStart: true,
            readWorksheetRows: readAt(offset),
            ...extra,
          },
        ),
      ).then((items) => Date.parse(items[0]!.cursor as string));
    const behind = await read(-30_000);
    expect(behind).toBeLessThanOrEqual(Date.now() - 30_000 - MARGIN_MS);
    expect(behind).toBeGreaterThanOrEqual(now - 30_000 - MARGIN_MS - 1000);
    const ahead = await read(platformAhead);
    expect(ahead).toBeGreaterThanOrEqual(now + platformAhead - MARGIN_MS - 1000);
    expect(ahead).toBeLessThanOrEqual(Date.now() + platformAhead - MARGIN_MS);
    // A resumed read: its first attempt's start (this machine's clock) moved onto the platform's.
    const firstAttempt = now - 60_000;
    const resumed = await read(-30_000, { scanStartedAt: firstAttempt });
    expect(resumed).toBeLessThanOrEqual(firstAttempt - 30_000 - MARGIN_MS);
    expect(resumed).toBeGreaterThanOrEqual(firstAttempt - 30_000 - MARGIN_MS - 1000);
    const wider = await read(-30_000, { env: { ROWBRIDGE_CURSOR_MARGIN_SECONDS: '20' } });
    expect(wider).toBeLessThanOrEqual(Date.now() - 30_000 - 20_000);
    expect(wider).toBeGreaterThanOrEqual(now - 30_000 - 20_000 - 1000);
  });

  it("reads a zone-less --from/--to on _updatedAt as the organisation's wall clock, to the second", async () => {
    // r1 changed at 2024-01-01 08:00:00 Shanghai time (00:00:00Z), r2 at 2024-02-01 08:00:00.
    const read = (since: string, until?: string) =>
      collect(
        createSource(
          { type: 'worksheet', worksheet: 'w' },
          {
            env: {},
            baseDir: '/',
            since,
            sinceInclusive: true,
            ...(until === undefined ? {} : { until }),
            cursorField: '_updatedAt',
            platformTimeZone: 'Asia/Shanghai',
            readWorksheetRows: reader([]),
          },
        ),
      );
    expect((await read('2024-01-01 08:00:00')).map((i) => i.position.id)).toEqual(['r1', 'r2', 'r3']);
    expect((await read('2024-01-01 08:00:01')).map((i) => i.position.id)).toEqual(['r2', 'r3']);
    expect((await read('2024-01-01 08:00:00', '2024-02-01 07:59:59')).map((i) => i.position.id)).toEqual([
      'r1',
    ]);
    expect((await read('2024-01-01', '2024-02-01 08:00:00')).map((i) => i.position.id)).toEqual(['r1', 'r2']);
  });

  it('fails clearly when the engine wired no reader', async () => {
    const err = await rejection(
      collect(createSource({ type: 'worksheet', worksheet: 'w' }, { env: {}, baseDir: '/' })),
    );
    expect(err.code).toBe('SOURCE_CONFIG');
    expect(err.message).toContain('worksheet source "w"');
  });
});
