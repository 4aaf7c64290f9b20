/**
 * Worksheet source: rows of another application's worksheet, read through the injected
 * `readWorksheetRows` (the engine wires it to that application's API client; credentials
 * are its concern). `data` is the row's field values, keyed by field id and alias, plus
 * the system fields a job may map: `rowid` (also `_id`), `_createdAt` and `_updatedAt`
 * (ISO 8601 instants), `_createdBy`, `_updatedBy` and `_owner` (the person's name, or
 * the user object with `values: raw`), and the others as received (`_autoId`).
 * `position.id` is the row id.
 *
 * The cursor is the job's cursor field when the row has it, else the row's `updatedAt`
 * (ISO string). A read by `updatedAt` asks the platform for the changed rows only
 * (`utime between`, updated-since-filter.ts); every row is still checked client-side
 * against `since` (and `until` for a backfill chunk), so a condition the platform
 * ignored would cost requests, never a row read twice or a row past the bounds.
 *
 * Offset paging has no snapshot: a row edited during the scan, on a page already read,
 * is not seen, while a later page may hold a row edited after it. Saving the largest
 * `_updatedAt` read would then put the cursor past that edit, and the row would never be
 * read again. With `capCursorAtScanStart` (runs that upsert by key, where reading a row
 * twice writes nothing) no record reports a cursor past the scan's start, on the
 * platform's clock (the `Date` of its answers, told by the reader before the first page),
 * less `ROWBRIDGE_CURSOR_MARGIN_SECONDS` (cursor-cap.ts): every edit made during the scan
 * is at or after it, so the next run reads it. Without a `Date` this machine's clock
 * stands in. The price is that a run reads again the rows changed in that margin before
 * the previous scan (unchanged, they cost no write).
 */
import type { WorksheetSourceSpec } from './source-spec.ts';
import type { SourceDeps, WorksheetReadQuery } from './source-deps.ts';
import { isEmptyCursor, isInCursorRange } from './cursor-filter.ts';
import { isLaterCursor } from './cursor.ts';
import { SourceError, type SourceItem } from './source-error.ts';
import type { NormalisedRow } from '../../api/types.ts';
import { createZoneClock } from '../../api/zone-clock.ts';
import type { CursorBounds } from './cursor-filter.ts';
import { andCondition, updatedBetween } from './updated-since-filter.ts';
import { cursorCap, cursorMarginMs } from './cursor-cap.ts';

const ZONE_LESS = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/** Bounds on `_updatedAt` with zone-less values read as the organisation's wall clock (ISO instants otherwise). */
function platformBounds(deps: SourceDeps): CursorBounds {
  const zone = deps.platformTimeZone;
  if (zone === undefined) return deps;
  const clock = createZoneClock(zone);
  const instant = (value: unknown): unknown => {
    const m = typeof value === 'string' ? ZONE_LESS.exec(value.trim()) : null;
    if (m === null) return value;
    const [y, mo, d, h, mi, s] = m.slice(1).map((part) => Number(part ?? 0));
    return new Date(clock.toInstant(y!, mo!, d!, h!, mi!, s!)).toISOString();
  };
  return { since: instant(deps.since), sinceInclusive: deps.sinceInclusive, until: instant(deps.until) };
}

// Names a job may use for the row's modification time rather than a field of its own.
const UPDATED_AT_NAMES = new Set(['_updatedAt', 'utime', 'updatedAt']);

/** Streams the rows of a worksheet of another application. */
export async function* readWorksheetSource(
  spec: WorksheetSourceSpec,
  deps: SourceDeps,
): AsyncGenerator<SourceItem> {
  const readRows = deps.readWorksheetRows;
  if (readRows === undefined) {
    throw new SourceError(
      'SOURCE_CONFIG',
      `worksheet source "${spec.worksheet}": no worksheet reader was wired for this job`,
    );
  }
  const ids = deps.ids === undefined ? undefined : new Set(deps.ids);
  if (ids?.size === 0) return;
  // By id: `rowid in [...]` fetches the rows (platform-shapes §8 [C]); beside a filter of
  // the job's own (which may use both nesting levels already) the ids are checked here.
  const byId =
    deps.ids === undefined || spec.filter !== undefined
      ? spec.filter
      : { type: 'condition' as const, field: 'rowid', operator: 'in' as const, value: [...deps.ids] };
  const field = deps.cursorField;
  const fromUpdatedAt = field === undefined || UPDATED_AT_NAMES.has(field);
  const bounds = fromUpdatedAt ? platformBounds(deps) : deps;
  const changed =
    fromUpdatedAt && deps.platformTimeZone !== undefined
      ? updatedBetween(bounds, deps.platformTimeZone)
      : undefined;
  const filter = changed === undefined ? byId : (andCondition(byId, changed) ?? byId);
  const query: WorksheetReadQuery = {
    worksheet: spec.worksheet,
    ...(spec.view === undefined ? {} : { view: spec.view }),
    ...(filter === undefined ? {} : { filter }),
    ...(spec.fields === undefined ? {} : { fields: spec.fields }),
    ...(spec.credentialsEnvPrefix === undefined ? {} : { credentialsEnvPrefix: spec.credentialsEnvPrefix }),
    ...(spec.values === undefined ? {} : { values: spec.values }),
    ...(deps.worksheetLists === undefined ? {} : { lists: deps.worksheetLists }),
    ...(deps.signal === undefined ? {} : { signal: deps.signal }),
  };
  // Taken before the first page is asked for: every edit the scan may miss is later. A
  // read resumed after a crash caps at its first attempt's start, taken on this machine's
  // clock: on the platform's, that plus the difference between the two clocks now.
  let ceiling: string | undefined;
  const capAt = (platformTime: number | undefined) => {
    const local = Date.now();
    const started = Math.min(Number.isFinite(deps.scanStartedAt) ? deps.scanStartedAt! : local, local);
    const clock = platformTime === undefined ? started : started + (platformTime - local);
    ceiling = new Date(cursorCap(clock, cursorMarginMs(deps.env))).toISOString();
  };
  if (fromUpdatedAt && deps.capCursorAtScanStart === true) {
    capAt(undefined);
    query.onScanStart = capAt;
  }
  let index = 0;
  for await (const row of readRows(query)) {
    deps.signal?.throwIfAborted();
    if (ids !== undefined && !ids.has(row.id)) continue;
    const cursor = fromUpdatedAt ? row.updatedAt?.toISOString() : row.values[field];
    if (!isInCursorRange(cursor, bounds)) continue;
    // The record's cursor is what a run may save having read it; the row's own time is in `data`.
    const reported = ceiling !== undefined && isLaterCursor(cursor, ceiling) ? ceiling : cursor;
    yield {
      data: { ...row.values, ...systemData(row, spec.values === 'raw') },
      position: { index: index++, id: row.id, idColumn: 'rowid' },
      ...(isEmptyCursor(reported) ? {} : { cursor: reported }),
    };
  }
}

type UserRef = NonNullable<NormalisedRow['owner']>;

/** The row's system fields under the names a job maps them by. */
function systemData(row: NormalisedRow, raw: boolean): Record<string, unknown> {
  const user = (ref: UserRef | undefined) =>
    ref === undefined ? null : raw ? ref : (ref.fullname ?? ref.accountId);
  return {
    ...row.system,
    rowid: row.id,
    _id: row.id,
    _createdAt: row.createdAt?.toISOString() ?? null,
    _updatedAt: row.updatedAt?.toISOString() ?? null,
    _createdBy: user(row.createdBy),
    _updatedBy: user(row.updatedBy),
    _owner: user(row.owner),
  };
}
