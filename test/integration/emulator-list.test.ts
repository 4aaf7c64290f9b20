import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import type { EmulatorHandle } from '../../src/emulator/start-emulator.ts';

interface Envelope<T> {
  success: boolean;
  error_code: number;
  error_msg: string;
  data: T;
}
interface FieldsRow {
  id: string;
  fields: Array<{ id: string; alias: string; value: unknown }>;
  _createdAt?: string;
}
interface Page<R = FieldsRow> {
  rows: R[];
  total?: number;
  pageIndex: number;
  pageSize: number;
}

const SALES = 'd0000000-0000-4000-8000-0000000000d2';
const SALES_NORTH = 'd0000000-0000-4000-8000-0000000000d3';
const ENGINEERING = 'd0000000-0000-4000-8000-0000000000d4';
const BEN = 'a0000000-0000-4000-8000-000000000002';
const CY = 'a0000000-0000-4000-8000-000000000003';

let emulator: EmulatorHandle;
let clock = Date.parse('2024-01-01T00:00:00.000Z');
const headers = { 'APP-Appkey': 'list-key', 'APP-Sign': 'list-sign', 'content-type': 'application/json' };
const LIST = '/v3/app/worksheets/items/rows/list';

async function call<T = Page>(path: string, body: unknown): Promise<Envelope<T>> {
  const res = await fetch(`${emulator.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return (await res.json()) as Envelope<T>;
}

/** Titles of the rows a filter matches, in answer order. */
async function titles(filter: unknown, extra: Record<string, unknown> = {}): Promise<string[]> {
  const res = await call(LIST, { pageSize: 100, pageIndex: 1, filter, ...extra });
  expect(res.error_msg).toBe('');
  return res.data.rows.map((r) => r.fields.find((f) => f.alias === 'title')!.value as string);
}

const cond = (field: string, operator: string, value?: unknown) => ({
  type: 'condition',
  field,
  operator,
  value,
});

function optionKey(alias: string, text: string): string {
  return emulator.state
    .worksheet('items')!
    .fields.find((f) => f.alias === alias)!
    .options!.find((o) => o.value === text)!.key;
}

beforeAll(async () => {
  emulator = await startEmulator({
    dialect: 'spec',
    now: () => clock,
    seed: {
      apps: [
        {
          name: 'List',
          appKey: 'list-key',
          sign: 'list-sign',
          worksheets: [
            {
              name: 'Items',
              alias: 'items',
              fields: [
                { name: 'Title', alias: 'title', type: 'Text', isTitle: true },
                { name: 'Code', alias: 'code', type: 'Text', isUnique: true },
                { name: 'Qty', alias: 'qty', type: 'Number' },
                {
                  name: 'Status',
                  alias: 'status',
                  type: 'SingleSelect',
                  options: [
                    { value: 'Open', index: 1 },
                    { value: 'Done', index: 2 },
                  ],
                },
                {
                  name: 'Tags',
                  alias: 'tags',
                  type: 'MultipleSelect',
                  options: [
                    { value: 'red', index: 1 },
                    { value: 'blue', index: 2 },
                  ],
                },
                { name: 'Owner', alias: 'owner', type: 'Collaborator' },
                { name: 'Team', alias: 'team', type: 'Department' },
                { name: 'Region', alias: 'region', type: 'Region' },
                { name: 'Due', alias: 'due', type: 'Date' },
                { name: 'Photo', alias: 'photo', type: 'Attachment' },
              ],
              rows: [
                {
                  title: 'Alpha apple',
                  code: 'A1',
                  qty: 5,
                  status: ['Open'],
                  tags: ['red'],
                  owner: [BEN],
                  team: [SALES_NORTH],
                  region: '310101',
                  due: '2024-01-10',
                },
                {
                  title: 'Beta banana',
                  code: 'B2',
                  qty: 10,
                  status: ['Done'],
                  tags: ['red', 'blue'],
                  owner: [CY],
                  team: [ENGINEERING],
                  region: '440300',
                  due: '2024-02-10',
                },
                {
                  title: 'Gamma apple pie',
                  code: 'C3',
                  qty: 15,
                  status: ['Open'],
                  tags: ['blue'],
                  owner: [BEN, CY],
                  team: [SALES],
                  due: '2024-03-10',
                },
                { title: 'Delta', qty: 20, photo: [{ name: 'd.png', url: 'https://files.test/d.png' }] },
              ],
            },
          ],
        },
      ],
    },
  });
  clock += 60_000;
  // One row created later, by HTTP: ctime and caid filters tell it apart.
  const created = await fetch(`${emulator.url}/v3/app/worksheets/items/rows`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      fields: [
        { id: 'title', value: 'Epsilon' },
        { id: 'qty', value: 25 },
      ],
    }),
  });
  expect(((await created.json()) as Envelope<unknown>).success).toBe(true);
});

afterAll(async () => {
  await emulator.close();
});

describe('emulator row list: filters by operator family', () => {
  it('text operators', async () => {
    expect(await titles(cond('title', 'eq', 'Delta'))).toEqual(['Delta']);
    expect(await titles(cond('title', 'ne', 'Delta'))).toHaveLength(4);
    expect(await titles(cond('title', 'contains', 'APPLE'))).toEqual(['Alpha apple', 'Gamma apple pie']);
    expect(await titles(cond('title', 'notcontains', 'apple'))).toEqual(['Beta banana', 'Delta', 'Epsilon']);
    expect(await titles(cond('title', 'startswith', 'be'))).toEqual(['Beta banana']);
    expect(await titles(cond('title', 'notstartswith', 'a'))).toHaveLength(4);
    expect(await titles(cond('title', 'endswith', 'pie'))).toEqual(['Gamma apple pie']);
    expect(await titles(cond('title', 'notendswith', 'a'))).toEqual([
      'Alpha apple',
      'Gamma apple pie',
      'Epsilon',
    ]);
    expect(await titles(cond('title', 'concurrent', ['apple', 'pie']))).toEqual(['Gamma apple pie']);
    expect(await titles(cond('code', 'isempty'))).toEqual(['Delta', 'Epsilon']);
    expect(await titles(cond('code', 'isnotempty'))).toHaveLength(3);
    expect(await titles(cond('code', 'eq', ['A1', 'C3']))).toEqual(['Alpha apple', 'Gamma apple pie']);
  });

  it('number operators', async () => {
    expect(await titles(cond('qty', 'eq', 10))).toEqual(['Beta banana']);
    expect(await titles(cond('qty', 'ne', '10'))).toHaveLength(4);
    expect(await titles(cond('qty', 'gt', 15))).toEqual(['Delta', 'Epsilon']);
    expect(await titles(cond('qty', 'ge', 15))).toEqual(['Gamma apple pie', 'Delta', 'Epsilon']);
    expect(await titles(cond('qty', 'lt', 10))).toEqual(['Alpha apple']);
    expect(await titles(cond('qty', 'le', 10))).toEqual(['Alpha apple', 'Beta banana']);
    expect(await titles(cond('qty', 'between', [10, 20]))).toEqual([
      'Beta banana',
      'Gamma apple pie',
      'Delta',
    ]);
    expect(await titles(cond('qty', 'notbetween', [10, 20]))).toEqual(['Alpha apple', 'Epsilon']);
  });

  it('select and member operators compare sets', async () => {
    const red = optionKey('tags', 'red');
    const blue = optionKey('tags', 'blue');
    expect(await titles(cond('status', 'in', [optionKey('status', 'Done')]))).toEqual(['Beta banana']);
    expect(await titles(cond('status', 'notin', [optionKey('status', 'Done')]))).toHaveLength(4);
    expect(await titles(cond('tags', 'in', [red]))).toEqual(['Alpha apple', 'Beta banana']);
    expect(await titles(cond('tags', 'eq', [red]))).toEqual(['Alpha apple']);
    expect(await titles(cond('tags', 'ne', [red]))).toEqual([
      'Beta banana',
      'Gamma apple pie',
      'Delta',
      'Epsilon',
    ]);
    expect(await titles(cond('tags', 'concurrent', [red, blue]))).toEqual(['Beta banana']);
    expect(await titles(cond('tags', 'isempty'))).toEqual(['Delta', 'Epsilon']);
    expect(await titles(cond('owner', 'in', [CY]))).toEqual(['Beta banana', 'Gamma apple pie']);
  });

  it('department and region belongsto include descendants', async () => {
    expect(await titles(cond('team', 'belongsto', [SALES]))).toEqual(['Alpha apple', 'Gamma apple pie']);
    expect(await titles(cond('team', 'notbelongsto', [SALES]))).toEqual(['Beta banana', 'Delta', 'Epsilon']);
    expect(await titles(cond('region', 'belongsto', ['310000']))).toEqual(['Alpha apple']);
    expect(await titles(cond('region', 'in', ['440300']))).toEqual(['Beta banana']);
  });

  it('date between and emptiness-only types', async () => {
    expect(await titles(cond('due', 'between', ['2024-01-01', '2024-02-10']))).toEqual([
      'Alpha apple',
      'Beta banana',
    ]);
    expect(await titles(cond('due', 'notbetween', ['2024-01-01', '2024-02-10']))).toEqual([
      'Gamma apple pie',
      'Delta',
      'Epsilon',
    ]);
    expect(await titles(cond('photo', 'isnotempty'))).toEqual(['Delta']);
  });

  it('system fields: rowid, ctime, caid, autoid', async () => {
    const all = await call(LIST, { pageSize: 10, pageIndex: 1 });
    const [first, , third] = all.data.rows;
    expect(await titles(cond('rowid', 'in', [third!.id, first!.id]))).toEqual([
      'Alpha apple',
      'Gamma apple pie',
    ]);
    expect(await titles(cond('ctime', 'gt', '2024-01-01 00:00:30'))).toEqual(['Epsilon']);
    expect(await titles(cond('_createdAt', 'between', ['2024-01-01', '2024-01-01']))).toHaveLength(5);
    expect(await titles(cond('caid', 'in', ['a0000000-0000-4000-8000-000000000001']))).toHaveLength(5);
    expect(await titles(cond('autoid', 'between', [2, 3]))).toEqual(['Beta banana', 'Gamma apple pie']);
  });

  it('AND/OR groups nest', async () => {
    const filter = {
      type: 'group',
      logic: 'OR',
      children: [
        cond('title', 'eq', 'Delta'),
        {
          type: 'group',
          logic: 'AND',
          children: [cond('qty', 'ge', 10), cond('title', 'contains', 'apple')],
        },
      ],
    };
    expect(await titles(filter)).toEqual(['Gamma apple pie', 'Delta']);
  });

  it('drops a condition with an unknown operator, or fails with 10001 when strict', async () => {
    // gte is not a wire operator (ge is); contains is not a number operator.
    expect(await titles(cond('qty', 'gte', 15))).toHaveLength(5);
    expect(
      await titles({
        type: 'group',
        logic: 'AND',
        children: [cond('qty', 'contains', '1'), cond('title', 'eq', 'Delta')],
      }),
    ).toEqual(['Delta']);
    emulator.setOptions({ strictOperators: true });
    try {
      const strict = await call(LIST, { pageSize: 10, pageIndex: 1, filter: cond('qty', 'gte', 15) });
      expect(strict.error_code).toBe(10001);
      expect(strict.error_msg).toContain('gte');
      expect(strict.error_msg).toContain('ge');
    } finally {
      emulator.setOptions({ strictOperators: false });
    }
    const unknownField = await call(LIST, { pageSize: 10, pageIndex: 1, filter: cond('nope', 'eq', 1) });
    expect(unknownField.error_code).toBe(10001);
  });
});

describe('emulator row list: sorts, paging, search, projection, shapes', () => {
  it('sorts by fields and defaults to creation order', async () => {
    expect(await titles(undefined, { sorts: [{ field: 'qty', isAsc: false }] })).toEqual([
      'Epsilon',
      'Delta',
      'Gamma apple pie',
      'Beta banana',
      'Alpha apple',
    ]);
    expect(
      await titles(undefined, {
        sorts: [
          { field: 'status', isAsc: true },
          { field: 'qty', isAsc: false },
        ],
      }),
    ).toEqual(['Epsilon', 'Delta', 'Gamma apple pie', 'Alpha apple', 'Beta banana']);
    expect(await titles(undefined)).toEqual([
      'Alpha apple',
      'Beta banana',
      'Gamma apple pie',
      'Delta',
      'Epsilon',
    ]);
  });

  it('pages from 1, counts only when asked, caps pageSize at 1000', async () => {
    const second = await call(LIST, { pageSize: 2, pageIndex: 2, includeTotalCount: true });
    expect(second.data.rows.map((r) => r.fields[0]!.value)).toEqual(['Gamma apple pie', 'Delta']);
    expect(second.data).toMatchObject({ total: 5, pageIndex: 2, pageSize: 2 });
    const noTotal = await call(LIST, { pageSize: 2, pageIndex: 3 });
    expect(noTotal.data.rows).toHaveLength(1);
    expect(noTotal.data.total).toBeUndefined();
    expect((await call(LIST, { pageSize: 5000, pageIndex: 1 })).data.pageSize).toBe(1000);
    expect((await call(LIST, { pageSize: 10, pageIndex: 0 })).error_code).toBe(10001);
    expect((await call(LIST, { pageIndex: 1 })).error_code).toBe(10001);
  });

  it('searches text and option values', async () => {
    expect(await titles(undefined, { search: 'banana' })).toEqual(['Beta banana']);
    expect(await titles(undefined, { search: 'done' })).toEqual(['Beta banana']);
  });

  it('projects fields and can leave system fields out', async () => {
    const res = await call(LIST, { pageSize: 1, pageIndex: 1, fields: ['qty'], includeSystemFields: false });
    expect(res.data.rows[0]!.fields.map((f) => f.alias)).toEqual(['qty']);
    expect(res.data.rows[0]!._createdAt).toBeUndefined();
  });

  it('serves the flat shape keyed by alias or by field id', async () => {
    emulator.setOptions({ rowShape: 'flat' });
    try {
      const byAlias = await call<Page<Record<string, unknown>>>(LIST, { pageSize: 1, pageIndex: 1 });
      expect(byAlias.data.rows[0]).toMatchObject({ title: 'Alpha apple', qty: '5', code: 'A1' });
      expect(byAlias.data.rows[0]!['rowid']).toBe(byAlias.data.rows[0]!['id']);
      const qtyId = emulator.state.worksheet('items')!.fields.find((f) => f.alias === 'qty')!.id;
      const byId = await call<Page<Record<string, unknown>>>(LIST, {
        pageSize: 1,
        pageIndex: 1,
        useFieldIdAsKey: true,
      });
      expect(byId.data.rows[0]![qtyId]).toBe('5');
      expect(byId.data.rows[0]!['qty']).toBeUndefined();
    } finally {
      emulator.setOptions({ rowShape: 'fields' });
    }
  });

  it('answers a Markdown table with responseFormat md', async () => {
    const res = await call<{ rows: string }>(LIST, {
      pageSize: 2,
      pageIndex: 1,
      responseFormat: 'md',
      fields: ['title', 'qty'],
    });
    expect(res.data.rows.split('\n')).toHaveLength(4);
    expect(res.data.rows).toContain('| Title | Qty |');
    expect(res.data.rows).toContain('Beta banana | 10 |');
  });

  it('pages through a filtered, sorted list once and sees writes made between pages', async () => {
    const sorted = (pageIndex: number) =>
      titles(cond('qty', 'ge', 0), { pageSize: 2, pageIndex, sorts: [{ field: 'qty', isAsc: true }] });
    expect([...(await sorted(1)), ...(await sorted(2)), ...(await sorted(3))]).toEqual([
      'Alpha apple',
      'Beta banana',
      'Gamma apple pie',
      'Delta',
      'Epsilon',
    ]);
    const alpha = emulator.state.rows('items')[0]!;
    const patch = (qty: number) =>
      fetch(`${emulator.url}/v3/app/worksheets/items/rows/${alpha.id}`, {
        method: 'PATCH',
        headers,
        body: JSON.stringify({ fields: [{ id: 'qty', value: qty }] }),
      });
    await patch(30);
    try {
      expect(await sorted(1)).toEqual(['Beta banana', 'Gamma apple pie']);
      expect(await sorted(3)).toEqual(['Alpha apple']);
    } finally {
      await patch(5);
    }
    expect(await sorted(1)).toEqual(['Alpha apple', 'Beta banana']);
  });
});
