import { describe, expect, it } from 'vitest';
import { iterateRowPages, iterateRows } from '../../../../src/api/rows/iterate-rows.ts';
import type { ListPage } from '../../../../src/api/rows/iterate-rows.ts';
import { RowPagingError } from '../../../../src/api/rows/row-errors.ts';
import { ConfigError } from '../../../../src/ground/errors.ts';
import type { ListRowsBody, ListRowsData, WireRow } from '../../../../src/api/types.ts';

/** An in-memory worksheet answering list requests the way the platform pages them. */
function fakeTable(count: number, opts: { totalAlways?: boolean } = {}) {
  const rows: WireRow[] = Array.from({ length: count }, (_, i) => ({
    rowid: `r${i + 1}`,
    name: `row ${i + 1}`,
  }));
  const requests: ListRowsBody[] = [];
  const listPage: ListPage = (body) => {
    requests.push(structuredClone(body));
    const start = (body.pageIndex - 1) * body.pageSize;
    const data: ListRowsData = { rows: rows.slice(start, start + body.pageSize) };
    if (body.includeTotalCount === true || opts.totalAlways === true) data.total = rows.length;
    return Promise.resolve(data);
  };
  return { rows, requests, listPage };
}

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}

const ids = (rows: WireRow[]) => rows.map((row) => (row as { rowid: string }).rowid);

describe('iterateRows', () => {
  it('reads every row in order, pages from 1 with pageSize 1000, and stops at the short page', async () => {
    const table = fakeTable(2500);
    const rows = await collect(iterateRows(table.listPage, {}));
    expect(rows).toHaveLength(2500);
    expect(ids(rows).slice(0, 2)).toEqual(['r1', 'r2']);
    expect(ids(rows).at(-1)).toBe('r2500');
    expect(table.requests.map((r) => [r.pageIndex, r.pageSize])).toEqual([
      [1, 1000],
      [2, 1000],
      [3, 1000],
    ]);
  });

  it('adds a stable sort (creation time, then row id) when the caller gave none', async () => {
    const table = fakeTable(3);
    await collect(iterateRows(table.listPage, { sorts: [] }));
    expect(table.requests[0]!.sorts).toEqual([
      { field: 'ctime', isAsc: true },
      { field: 'rowid', isAsc: true },
    ]);
  });

  it("keeps the caller's sort and only adds rowid as a tie-break", async () => {
    const table = fakeTable(3);
    await collect(iterateRows(table.listPage, { sorts: [{ field: 'price', isAsc: false }] }));
    expect(table.requests[0]!.sorts).toEqual([
      { field: 'price', isAsc: false },
      { field: 'rowid', isAsc: true },
    ]);

    const withRowid = fakeTable(3);
    const sorts = [{ field: 'rowid', isAsc: false }];
    await collect(iterateRows(withRowid.listPage, { sorts }));
    expect(withRowid.requests[0]!.sorts).toEqual([{ field: 'rowid', isAsc: false }]);
  });

  it('passes the rest of the query through unchanged', async () => {
    const table = fakeTable(1);
    const filter = { type: 'condition', field: 'status', operator: 'in', value: ['k1'] } as const;
    await collect(
      iterateRows(table.listPage, {
        filter,
        fields: ['name'],
        viewId: 'v1',
        useFieldIdAsKey: true,
        pageSize: 10,
      }),
    );
    expect(table.requests[0]).toMatchObject({
      filter,
      fields: ['name'],
      viewId: 'v1',
      useFieldIdAsKey: true,
    });
  });

  it('never requests an empty page when total says every row was served', async () => {
    const table = fakeTable(2000);
    const rows = await collect(iterateRows(table.listPage, { includeTotalCount: true }));
    expect(rows).toHaveLength(2000);
    expect(table.requests.map((r) => r.pageIndex)).toEqual([1, 2]);
  });

  it('without a total, stops at the first short page (total is absent unless includeTotalCount)', async () => {
    const table = fakeTable(25);
    const rows = await collect(iterateRows(table.listPage, { pageSize: 10 }));
    expect(ids(rows)).toEqual(table.rows.map((row) => (row as { rowid: string }).rowid));
    expect(table.requests.map((r) => r.pageIndex)).toEqual([1, 2, 3]);
    expect(table.requests.every((r) => r.includeTotalCount === undefined)).toBe(true);
  });

  it('reads a total sent as a numeric string (the list schema types it so)', async () => {
    const requests: number[] = [];
    const listPage: ListPage = (body) => {
      requests.push(body.pageIndex);
      const rows = body.pageIndex === 1 ? [{ id: 'a' }, { id: 'b' }] : [];
      return Promise.resolve({ rows, total: '2' } as unknown as ListRowsData);
    };
    const pages = await collect(iterateRowPages(listPage, { pageSize: 2 }));
    expect(pages.map((p) => p.total)).toEqual([2]);
    expect(requests).toEqual([1]);
  });

  it('without a total, needs one empty page to learn that an exact multiple ended', async () => {
    const table = fakeTable(20);
    const rows = await collect(iterateRows(table.listPage, { pageSize: 10 }));
    expect(rows).toHaveLength(20);
    expect(table.requests.map((r) => r.pageIndex)).toEqual([1, 2, 3]);
  });

  it('makes a single request for an empty worksheet', async () => {
    const table = fakeTable(0);
    expect(await collect(iterateRows(table.listPage, {}))).toEqual([]);
    expect(table.requests).toHaveLength(1);
  });

  it('caps pageSize at 1000', async () => {
    const table = fakeTable(1500);
    await collect(iterateRows(table.listPage, { pageSize: 5000 }));
    expect(table.requests.map((r) => r.pageSize)).toEqual([1000, 1000]);
  });

  it.each([0, -5, 2.5, Number.NaN])('rejects pageSize %s before sending anything', async (pageSize) => {
    const table = fakeTable(3);
    const run = collect(iterateRows(table.listPage, { pageSize }));
    await expect(run).rejects.toThrow(ConfigError);
    await expect(run).rejects.toThrow(/pageSize must be a whole number from 1 to 1000/);
    expect(table.requests).toHaveLength(0);
  });

  it('resumes from startPage and rejects a startPage below 1', async () => {
    const table = fakeTable(35);
    const rows = await collect(iterateRows(table.listPage, { pageSize: 10 }, { startPage: 3 }));
    expect(ids(rows)).toEqual(Array.from({ length: 15 }, (_, i) => `r${i + 21}`));
    expect(table.requests.map((r) => r.pageIndex)).toEqual([3, 4]);

    await expect(collect(iterateRows(table.listPage, {}, { startPage: 0 }))).rejects.toThrow(
      'startPage must be a whole number of at least 1 (pages start at 1), got 0',
    );
  });

  it('stops yielding rows and asking for pages once the signal is aborted', async () => {
    const table = fakeTable(50);
    const controller = new AbortController();
    const seen: string[] = [];
    const run = async () => {
      for await (const row of iterateRows(table.listPage, { pageSize: 10 }, { signal: controller.signal })) {
        seen.push((row as { rowid: string }).rowid);
        if (seen.length === 15) controller.abort(new Error('shutting down'));
      }
    };
    await expect(run()).rejects.toThrow('shutting down');
    expect(table.requests.map((r) => r.pageIndex)).toEqual([1, 2]);
    expect(seen).toHaveLength(15);
  });

  it('drops rows the previous page already yielded when an insert shifted the offsets', async () => {
    const table = fakeTable(20);
    let calls = 0;
    const shifting: ListPage = async (body) => {
      calls += 1;
      // Two rows are inserted at the front after page 1 was read.
      if (calls === 2) table.rows.unshift({ rowid: 'new1' }, { rowid: 'new2' });
      return table.listPage(body);
    };
    const pages = await collect(iterateRowPages(shifting, { pageSize: 10 }));
    const all = pages.flatMap((page) => ids(page.rows));
    expect(new Set(all).size).toBe(all.length);
    expect(pages[1]!.duplicates).toBe(2);
    expect(all).toContain('r20');
  });

  it('fails instead of looping forever when the server ignores pageIndex', async () => {
    const table = fakeTable(30);
    const stuck: ListPage = (body) => table.listPage({ ...body, pageIndex: 1 });
    const run = collect(iterateRows(stuck, { pageSize: 10 }));
    await expect(run).rejects.toThrow(RowPagingError);
    await expect(run).rejects.toThrow(/page 2 repeats every row of page 1/);
  });

  it('fails clearly when an answer has no rows array', async () => {
    const broken: ListPage = () => Promise.resolve({} as ListRowsData);
    await expect(collect(iterateRows(broken, {}))).rejects.toThrow(/answer for page 1 has no rows array/);
  });

  it('reports each page with its index and the total for progress', async () => {
    const table = fakeTable(25, { totalAlways: true });
    const pages = await collect(iterateRowPages(table.listPage, { pageSize: 10 }));
    expect(pages.map((p) => [p.pageIndex, p.rows.length, p.total])).toEqual([
      [1, 10, 25],
      [2, 10, 25],
      [3, 5, 25],
    ]);
  });

  it('reads rows of the spec shape (id + fields) as well', async () => {
    const specRows: WireRow[] = [
      { id: 'a', fields: [] },
      { id: 'b', fields: [] },
    ];
    const listPage: ListPage = (body) =>
      Promise.resolve({ rows: body.pageIndex === 1 ? specRows : [], total: 2 });
    const rows = await collect(iterateRows(listPage, { pageSize: 2 }));
    expect(rows.map((row) => (row as { id: string }).id)).toEqual(['a', 'b']);
  });
});
