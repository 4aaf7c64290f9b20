/**
 * Reads every row of a list query, page by page (platform notes §3: `pageIndex` starts
 * at 1, `pageSize` is at most 1000, `total` only comes back with `includeTotalCount`).
 */
import { readLooseInteger } from '../answers/read-loose.ts';
import { ConfigError } from '../../ground/errors.ts';
import type { ListRowsBody, ListRowsData, Sort, WireRow } from '../types.ts';
import { toWireFilter } from './filter-builder.ts';
import { RowPagingError } from './row-errors.ts';
import { wireRowId } from './wire-row-id.ts';

/** Largest page the platform serves (platform notes §3 [C]). */
export const MAX_PAGE_SIZE = 1000;

/** Fetches one page: usually the client's `POST .../rows/list` bound to a worksheet. */
export type ListPage = (body: ListRowsBody) => Promise<ListRowsData>;

/** A list body without the paging fields; `pageSize` is optional here. */
export type IterateRowsQuery = Omit<ListRowsBody, 'pageIndex' | 'pageSize'> & {
  /**
   * Rows per request. Values above 1000 are lowered to 1000.
   * @defaultValue 1000
   */
  pageSize?: number;
};

export interface IterateRowsOptions {
  /**
   * Aborting ends the scan with the signal's reason: no further request is made and no
   * further row is yielded, even from a page already fetched.
   */
  signal?: AbortSignal;
  /**
   * First page to request, to resume a scan.
   * @defaultValue 1
   */
  startPage?: number;
}

/** One page of a scan, for progress reporting. */
export interface RowPage {
  pageIndex: number;
  pageSize: number;
  /** Rows of the page, minus rows the previous page already yielded. */
  rows: WireRow[];
  /** Total row count when the server sent one (it does with `includeTotalCount: true`). */
  total: number | undefined;
  /** Rows dropped from this page because the previous page already yielded them. */
  duplicates: number;
}

/**
 * Offset paging has no snapshot (platform notes §3 [U]), so a full scan needs a total,
 * repeatable order. Creation time first: rows created during the scan sort after the
 * cursor instead of pushing already-read rows into the next page. Row ids are random
 * UUIDs, so rowid alone would put new rows anywhere; it serves as the tie-break for rows
 * created in the same second (bulk imports).
 */
function stableSorts(sorts: readonly Sort[] | undefined): Sort[] {
  if (sorts === undefined || sorts.length === 0) {
    return [
      { field: 'ctime', isAsc: true },
      { field: 'rowid', isAsc: true },
    ];
  }
  // The caller's order is kept; rowid only breaks its ties, which does not change the
  // order of rows the caller's keys tell apart.
  if (sorts.some((sort) => sort.field === 'rowid')) return [...sorts];
  return [...sorts, { field: 'rowid', isAsc: true }];
}

function checkPageSize(pageSize: number | undefined): number {
  if (pageSize === undefined) return MAX_PAGE_SIZE;
  if (!Number.isInteger(pageSize) || pageSize < 1) {
    throw new ConfigError(
      `row list: pageSize must be a whole number from 1 to ${MAX_PAGE_SIZE} (larger values are lowered to ${MAX_PAGE_SIZE}), got ${String(pageSize)}`,
    );
  }
  return Math.min(pageSize, MAX_PAGE_SIZE);
}

function checkStartPage(startPage: number | undefined): number {
  if (startPage === undefined) return 1;
  if (!Number.isInteger(startPage) || startPage < 1) {
    throw new ConfigError(
      `row list: startPage must be a whole number of at least 1 (pages start at 1), got ${String(startPage)}`,
    );
  }
  return startPage;
}

function readPage(data: unknown, pageIndex: number): { rows: WireRow[]; total: number | undefined } {
  const rows = typeof data === 'object' && data !== null ? (data as { rows?: unknown }).rows : undefined;
  if (!Array.isArray(rows)) {
    throw new RowPagingError(`row list: the answer for page ${pageIndex} has no rows array`, pageIndex);
  }
  // rows.list already reads `total` in its spellings (a numeric string too, platform-shapes
  // §5 [C]); a page from elsewhere may still carry the string.
  const total = readLooseInteger((data as { total?: unknown }).total);
  const knownTotal = total !== undefined && total >= 0 ? total : undefined;
  return { rows: rows as WireRow[], total: knownTotal };
}

/**
 * Yields the pages of a list query from `startPage` on. Stops after a short page, or as
 * soon as `total` says every row has been served, so it never asks for an empty page
 * when the total is known. Adds a stable sort (see {@link stableSorts}); with a `viewId`
 * this means the view's own order is replaced by that sort, while its filter still applies.
 * Condition values go out as arrays of strings, whoever built the filter ({@link toWireFilter}).
 */
export async function* iterateRowPages(
  listPage: ListPage,
  query: IterateRowsQuery,
  options: IterateRowsOptions = {},
): AsyncGenerator<RowPage, void, undefined> {
  const { pageSize: requestedSize, sorts: requestedSorts, ...given } = query;
  const rest = given.filter === undefined ? given : { ...given, filter: toWireFilter(given.filter) };
  const pageSize = checkPageSize(requestedSize);
  const firstPage = checkStartPage(options.startPage);
  const sorts = stableSorts(requestedSorts);
  const { signal } = options;

  let previousIds: ReadonlySet<string> = new Set();
  for (let pageIndex = firstPage; ; pageIndex += 1) {
    signal?.throwIfAborted();
    const data = await listPage({ ...rest, sorts: sorts.map((sort) => ({ ...sort })), pageIndex, pageSize });
    signal?.throwIfAborted();
    const { rows, total } = readPage(data, pageIndex);

    // A row inserted before the cursor pushes the previous page's last rows into this
    // one; dropping them keeps the scan free of duplicates for shifts below a page.
    const ids = new Set<string>();
    const fresh: WireRow[] = [];
    for (const row of rows) {
      const id = wireRowId(row);
      if (id !== undefined) ids.add(id);
      if (id === undefined || !previousIds.has(id)) fresh.push(row);
    }
    const full = rows.length >= pageSize;
    if (full && fresh.length === 0 && pageIndex > firstPage) {
      // Without this a server that ignores pageIndex (or pageSize) would be read forever.
      throw new RowPagingError(
        `row list: page ${pageIndex} repeats every row of page ${pageIndex - 1}; the server seems to ignore pageIndex`,
        pageIndex,
      );
    }

    yield { pageIndex, pageSize, rows: fresh, total, duplicates: rows.length - fresh.length };

    if (!full) return;
    if (total !== undefined && pageIndex * pageSize >= total) return;
    previousIds = ids;
  }
}

/**
 * Yields every row of a list query, one at a time, in a stable order. See
 * {@link iterateRowPages} for paging, sorting and stop rules.
 */
export async function* iterateRows(
  listPage: ListPage,
  query: IterateRowsQuery,
  options: IterateRowsOptions = {},
): AsyncGenerator<WireRow, void, undefined> {
  for await (const page of iterateRowPages(listPage, query, options)) {
    for (const row of page.rows) {
      // A shutdown should not wait for the rest of a 1000-row page to be processed.
      options.signal?.throwIfAborted();
      yield row;
    }
  }
}
