/**
 * Incremental reads outside a database: the source compares each record's cursor value
 * with the saved one and keeps only records past it (and, for a backfill chunk, not past
 * `until`). Values compare as numbers when both are numeric, as instants when both are
 * dates, else as strings.
 */
import { SourceError } from './source-error.ts';

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;
// ISO-like dates, with or without time and zone (the platform also sends "2024-03-25 15:52:58").
const DATE_LIKE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$/;

function asNumberText(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string' && NUMERIC.test(value.trim())) return value.trim();
  return undefined;
}

function asInstant(value: unknown): { ms: number; fraction: string } | undefined {
  if (value instanceof Date) {
    const ms = value.getTime();
    return Number.isNaN(ms) ? undefined : { ms, fraction: '' };
  }
  if (typeof value !== 'string' || !DATE_LIKE.test(value.trim())) return undefined;
  const ms = Date.parse(value.trim());
  if (Number.isNaN(ms)) return undefined;
  // Date keeps milliseconds only; database text cursors carry microseconds, and two values
  // equal to the millisecond must still order, or a row past the cursor would be skipped.
  const fraction = /:\d{2}\.(\d+)/.exec(value)?.[1] ?? '';
  return { ms, fraction: fraction.slice(3).padEnd(9, '0') };
}

function sign(n: number): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}

/** Orders two cursor values: negative when `a` comes before `b`, 0 when equal. */
export function compareCursor(a: unknown, b: unknown): number {
  const na = asNumberText(a);
  const nb = asNumberText(b);
  if (na !== undefined && nb !== undefined) {
    // Integer ids past 2^53 (bigint keys arrive as strings) must not collapse together.
    if (INTEGER.test(na) && INTEGER.test(nb)) {
      const ba = BigInt(na);
      const bb = BigInt(nb);
      return ba < bb ? -1 : ba > bb ? 1 : 0;
    }
    return sign(Number(na) - Number(nb));
  }
  const da = asInstant(a);
  const db = asInstant(b);
  if (da !== undefined && db !== undefined) {
    if (da.ms !== db.ms) return sign(da.ms - db.ms);
    return da.fraction < db.fraction ? -1 : da.fraction > db.fraction ? 1 : 0;
  }
  const sa = a instanceof Date ? a.toISOString() : String(a);
  const sb = b instanceof Date ? b.toISOString() : String(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

/** Whether a cursor value counts as absent. */
export function isEmptyCursor(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/** What the filter decided for one record. */
export interface CursorDecision {
  keep: boolean;
  /** The record's cursor value, when the job has a cursor field and the record a value. */
  cursor?: unknown;
}

/** The cursor values a read covers, as `SourceDeps` carries them. */
export interface CursorBounds {
  /** Lower bound, exclusive unless `sinceInclusive`; empty means none. */
  since?: unknown;
  /** The first chunk of a backfill reads `cursor >= since`. @defaultValue `false` */
  sinceInclusive?: boolean | undefined;
  /** Inclusive upper bound (a backfill chunk); empty means none. */
  until?: unknown;
}

/** Whether the bounds close the read at the top, i.e. it is a backfill of a range. */
export function isRangeRead(bounds: CursorBounds): boolean {
  return !isEmptyCursor(bounds.until);
}

/**
 * Whether a record's cursor value lies within the bounds. A record without a value is
 * read by an ordinary incremental run (nothing proves it was synced before, and writing it
 * again is an idempotent upsert, while dropping it loses it) but not by a range read: a
 * backfill reads a range, and a record with no cursor belongs to no range; keeping it
 * would write it once per chunk.
 */
export function isInCursorRange(cursor: unknown, bounds: CursorBounds): boolean {
  if (isEmptyCursor(cursor)) return !isRangeRead(bounds);
  if (!isEmptyCursor(bounds.since)) {
    const vsSince = compareCursor(cursor, bounds.since);
    if (bounds.sinceInclusive === true ? vsSince < 0 : vsSince <= 0) return false;
  }
  return isEmptyCursor(bounds.until) || compareCursor(cursor, bounds.until) <= 0;
}

/**
 * A filter for records read from files and APIs. Without a cursor field every record is
 * kept; a range read (`until` set) needs one, so it throws a `SOURCE_CONFIG` error naming
 * `who`. Records without a cursor value: see `isInCursorRange`.
 */
export function createCursorFilter(
  since: unknown,
  cursorField: string | undefined,
  range: Omit<CursorBounds, 'since'> = {},
  who = 'source',
): (data: Record<string, unknown>) => CursorDecision {
  const bounds: CursorBounds = { since, sinceInclusive: range.sinceInclusive, until: range.until };
  if (cursorField === undefined && isRangeRead(bounds)) {
    throw new SourceError(
      'SOURCE_CONFIG',
      `${who}: reading a range of cursor values (a backfill with --from/--to) needs incremental.cursor in the job: without a cursor field no record can be placed in the range`,
    );
  }
  return (data) => {
    if (cursorField === undefined) return { keep: true };
    const cursor = data[cursorField];
    if (isEmptyCursor(cursor)) return { keep: isInCursorRange(cursor, bounds) };
    return { keep: isInCursorRange(cursor, bounds), cursor };
  };
}
