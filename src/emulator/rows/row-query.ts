/**
 * Row lists: filter, search, sorts and offset paging (platform notes §3). pageSize is
 * required and capped at 1000; pageIndex starts at 1; `total` only with
 * includeTotalCount. The default order is descending (newest first) in the platform
 * dialect, creation order in the spec dialect. Without sorts the table is streamed and
 * only the requested page is kept, so listing a large table costs one pass.
 */
import { OPTION_FIELD_TYPES } from '../field-kinds.ts';
import { paramError } from '../emulator-error.ts';
import {
  asObject,
  asString,
  describe,
  optionalArray,
  optionalBoolean,
  optionalInteger,
  optionalString,
} from '../input.ts';
import type { Json } from '../input.ts';
import type { ResolvedOptions } from '../options.ts';
import type { EmulatorState, StoredRow, WorksheetRecord } from '../state/records.ts';
import type { Predicate } from './filter-conditions.ts';
import { plainText } from './read-format.ts';
import { compileFilter, resolveTarget } from './row-filter.ts';
import { liveRow } from './row-table.ts';

export const MAX_PAGE_SIZE = 1000;

const UNSEARCHABLE: ReadonlySet<string> = new Set([
  'Checkbox',
  'Attachment',
  'Location',
  'SubTable',
  'Signature',
]);

export interface RowPage {
  rows: StoredRow[];
  /** Every match, counted only when asked for. */
  total: number | undefined;
  pageIndex: number;
  pageSize: number;
}

/** Paging parameters from a body or a query string. */
export function readPaging(source: Json, required: boolean): { pageSize: number; pageIndex: number } {
  const pageSize = optionalInteger(source['pageSize'], 'pageSize');
  const pageIndex = optionalInteger(source['pageIndex'], 'pageIndex');
  if (required && pageSize === undefined) throw paramError('pageSize is required (1 to 1000)');
  if (required && pageIndex === undefined) throw paramError('pageIndex is required (pages start at 1)');
  if (pageSize !== undefined && pageSize < 1)
    throw paramError(`pageSize must be at least 1, got ${pageSize}`);
  if (pageIndex !== undefined && pageIndex < 1) throw paramError(`pageIndex starts at 1, got ${pageIndex}`);
  return { pageSize: Math.min(pageSize ?? 100, MAX_PAGE_SIZE), pageIndex: pageIndex ?? 1 };
}

type SortKey = (row: StoredRow) => string | number | undefined;

function sortKey(state: EmulatorState, ws: WorksheetRecord, name: string, where: string): SortKey {
  const { target, field } = resolveTarget(state, ws, name, where);
  switch (target.family) {
    case 'id':
      return (row) => row.id;
    case 'text':
    case 'number':
    case 'date':
    case 'time':
      return target.get;
    case 'set':
      if (field !== undefined && OPTION_FIELD_TYPES.has(field.type)) {
        // Options sort in their structure order, as the platform's views do.
        return (row) => {
          const key = target.get(row)[0];
          return key === undefined ? undefined : field.options.find((o) => o.key === key)?.index;
        };
      }
      return field === undefined
        ? (row) => target.get(row)[0]
        : (row) => plainText(state, field, row) || undefined;
    case 'presence':
      return field === undefined ? () => undefined : (row) => plainText(state, field, row) || undefined;
  }
}

function compare(a: string | number | undefined, b: string | number | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return -1;
  if (b === undefined) return 1;
  return a < b ? -1 : 1;
}

function searchPredicate(state: EmulatorState, ws: WorksheetRecord, search: string): Predicate {
  const needle = search.toLowerCase();
  const fields = ws.fields.filter((f) => !UNSEARCHABLE.has(f.type));
  return (row) =>
    fields.some(
      (f) => row.values[f.id] !== undefined && plainText(state, f, row).toLowerCase().includes(needle),
    );
}

/** Live rows in creation order, or newest first. */
function* liveRows(
  ws: WorksheetRecord,
  candidates: string[] | undefined,
  newestFirst = false,
): Iterable<StoredRow> {
  if (candidates === undefined) {
    const order = ws.table.order;
    if (newestFirst) {
      for (let i = order.length - 1; i >= 0; i -= 1) if (!order[i]!.deleted) yield order[i]!;
    } else for (const row of order) if (!row.deleted) yield row;
    return;
  }
  const rows = [...new Set(candidates)]
    .map((id) => liveRow(ws.table, id))
    .filter((r): r is StoredRow => r !== undefined);
  yield* rows.sort((a, b) => (newestFirst ? b.autoId - a.autoId : a.autoId - b.autoId));
}

/** The list options of an emulator's settings. */
export function listOptions(options: ResolvedOptions): ListOptions {
  const platform = options.dialect === 'platform';
  return {
    strict: options.strictOperators,
    descendingByDefault: platform,
    timeZone: platform ? options.timeZone : 'UTC',
  };
}

/** How a list reads its request, by dialect. */
export interface ListOptions {
  /** An unknown operator is 10001 instead of being dropped. */
  strict: boolean;
  /**
   * The platform sorts descending by default (platform-shapes §5 [C]): newest first
   * without `sorts`, and a sort without `isAsc` descends. The spec dialect ascends.
   */
  descendingByDefault: boolean;
  /** Zone in which zone-less `ctime`/`utime` bounds are read: the zone timestamps are served in. */
  timeZone: string;
}

/** Every live row matching a body's `filter` and `search` (pivot, relations). */
export function matchingRows(
  state: EmulatorState,
  ws: WorksheetRecord,
  body: Json,
  options: ListOptions,
): StoredRow[] {
  const filter = compileFilter(state, ws, body['filter'], options.strict, options.timeZone);
  const search = optionalString(body['search'], 'search');
  const tests = [filter.test, search === '' ? undefined : searchPredicate(state, ws, search)].filter(
    (t): t is Predicate => t !== undefined,
  );
  const out: StoredRow[] = [];
  for (const row of liveRows(ws, filter.candidates)) if (tests.every((t) => t(row))) out.push(row);
  return out;
}

export function listRows(
  state: EmulatorState,
  ws: WorksheetRecord,
  rawBody: unknown,
  options: ListOptions,
): RowPage {
  const descending = options.descendingByDefault;
  const body = rawBody === undefined ? {} : asObject(rawBody, 'request body');
  const { pageSize, pageIndex } = readPaging(body, true);
  const includeTotal = optionalBoolean(body['includeTotalCount'], 'includeTotalCount', false);
  const sorts = optionalArray(body['sorts'], 'sorts').map((raw, i) => {
    const sort = asObject(raw, `sorts[${i}]`);
    const key = sortKey(state, ws, asString(sort['field'], `sorts[${i}].field`), `sorts[${i}].field`);
    const asc = sort['isAsc'] === undefined ? !descending : sort['isAsc'];
    if (typeof asc !== 'boolean')
      throw paramError(`sorts[${i}].isAsc must be true or false, got ${describe(asc)}`);
    return { key, direction: asc ? 1 : -1 };
  });
  const filter = compileFilter(state, ws, body['filter'], options.strict, options.timeZone);
  const search = optionalString(body['search'], 'search');
  const tests = [filter.test, search === '' ? undefined : searchPredicate(state, ws, search)].filter(
    (t): t is Predicate => t !== undefined,
  );
  const offset = (pageIndex - 1) * pageSize;
  const table = ws.table;
  const page = (all: StoredRow[]): RowPage => ({
    rows: all.slice(offset, offset + pageSize),
    total: includeTotal ? all.length : undefined,
    pageIndex,
    pageSize,
  });

  if (
    tests.length === 0 &&
    filter.candidates === undefined &&
    sorts.length === 0 &&
    table.live === table.order.length
  ) {
    // No filter, no sort, nothing deleted: the page is a plain slice of creation order.
    if (!descending) return { ...page(table.order), total: includeTotal ? table.live : undefined };
    const end = Math.max(table.order.length - offset, 0);
    return {
      rows: table.order.slice(Math.max(end - pageSize, 0), end).reverse(),
      total: includeTotal ? table.live : undefined,
      pageIndex,
      pageSize,
    };
  }
  const key = JSON.stringify([body['filter'] ?? null, search, body['sorts'] ?? null]);
  const cached = table.queryCache;
  if (cached?.key === key && cached.revision === state.revision) return page(cached.rows);

  const matches = (row: StoredRow): boolean => tests.every((t) => t(row));
  if (sorts.length === 0 && !includeTotal && pageIndex === 1) {
    // A first page needs only its own rows: stop as soon as it is full.
    const rows: StoredRow[] = [];
    for (const row of liveRows(ws, filter.candidates, descending)) {
      if (!matches(row)) continue;
      rows.push(row);
      if (rows.length === pageSize) break;
    }
    return { rows, total: undefined, pageIndex, pageSize };
  }
  const all: StoredRow[] = [];
  for (const row of liveRows(ws, filter.candidates, descending)) if (matches(row)) all.push(row);
  if (sorts.length > 0) {
    all.sort((a, b) => {
      for (const s of sorts) {
        const c = compare(s.key(a), s.key(b));
        if (c !== 0) return c * s.direction;
      }
      return descending ? b.autoId - a.autoId : a.autoId - b.autoId;
    });
  }
  table.queryCache = { key, revision: state.revision, rows: all };
  return page(all);
}
