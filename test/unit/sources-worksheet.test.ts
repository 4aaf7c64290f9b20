import { describe, expect, it } from 'vitest';
import { createSource } from '../../src/sync/sources/create-source.ts';
import type { WorksheetReadQuery } from '../../src/sync/sources/source-deps.ts';
import type { NormalisedRow } from '../../src/sync/types.ts';
import { collect, rejection } from '../fixtures/sources/source-test-kit.ts';

const rows: NormalisedRow[] = [
  { id: 'r1', values: { name: 'A', seq: '3' }, updatedAt: new Date('2024-01-01T00:00:00.000Z'), system: {} },
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
        { type: 'worksheet', worksheet: 'orders', view: 'v1', filter, fields: ['name'], credentialsEnvPrefix: 'OTHER_' },
        { env: {}, baseDir: '/', readWorksheetRows: reader(seen) },
      ),
    );
    expect(seen).toEqual([{ worksheet: 'orders', view: 'v1', filter, fields: ['name'], credentialsEnvPrefix: 'OTHER_' }]);
    expect(items).toEqual([
      { data: { name: 'A', seq: '3' }, position: { index: 0, id: 'r1' }, cursor: '2024-01-01T00:00:00.000Z' },
      { data: { name: 'B', seq: '12' }, position: { index: 1, id: 'r2' }, cursor: '2024-02-01T00:00:00.000Z' },
      { data: { name: 'C' }, position: { index: 2, id: 'r3' } },
    ]);
  });

  it('with since reads only rows past it, by updatedAt or by the cursor field', async () => {
    const byTime = await collect(
      createSource({ type: 'worksheet', worksheet: 'w' }, { env: {}, baseDir: '/', since: '2024-01-15T00:00:00Z', readWorksheetRows: reader([]) }),
    );
    expect(byTime.map((i) => i.position.id)).toEqual(['r2', 'r3']);
    const byField = await collect(
      createSource({ type: 'worksheet', worksheet: 'w' }, { env: {}, baseDir: '/', since: '4', cursorField: 'seq', readWorksheetRows: reader([]) }),
    );
    expect(byField.map((i) => [i.position.id, i.cursor])).toEqual([['r2', '12'], ['r3', undefined]]);
  });

  it('fails clearly when the engine wired no reader', async () => {
    const err = await rejection(collect(createSource({ type: 'worksheet', worksheet: 'w' }, { env: {}, baseDir: '/' })));
    expect(err.code).toBe('SOURCE_CONFIG');
    expect(err.message).toContain('worksheet source "w"');
  });
});
