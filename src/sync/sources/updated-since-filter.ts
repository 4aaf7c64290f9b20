/**
 * The platform-side half of an incremental worksheet read: a `utime between [since,
 * until]` condition added to the job's own filter, so the platform sends only the rows
 * changed since the last run instead of every row (issue 23).
 *
 * `between` on a DateTime with `[start, end]` is what the platform's own filter generator
 * emits [C, platform-shapes §8]; the system id `utime` is filterable [C]. Bounds are
 * zone-less wall clock in the organisation's zone, the form `_updatedAt` is served in
 * [C format, U zone]. The platform compares whole seconds and `between` includes both
 * ends, so the bound is floored to its second: the read may return rows at the cursor's
 * own second again, and the exact (exclusive or inclusive) comparison stays client-side.
 */
import type { Filter, FilterCondition, FilterGroup } from '../../api/types.ts';
import { createZoneClock } from '../../api/zone-clock.ts';
import { isEmptyCursor, type CursorBounds } from './cursor-filter.ts';

/** The far end of an open range: the latest wall clock the format can write. */
const OPEN_END = '9999-12-31 23:59:59';
const OPEN_START = '1970-01-01 00:00:00';

function wallClock(value: unknown, zone: string): string | undefined {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) return undefined;
  return createZoneClock(zone).formatDateTime(Math.floor(ms / 1000) * 1000);
}

/** The `utime` condition for the bounds, or undefined when they bound nothing or cannot be read. */
export function updatedBetween(bounds: CursorBounds, zone: string): FilterCondition | undefined {
  if (isEmptyCursor(bounds.since) && isEmptyCursor(bounds.until)) return undefined;
  const start = isEmptyCursor(bounds.since) ? OPEN_START : wallClock(bounds.since, zone);
  // The upper bound is inclusive to the millisecond client-side; its whole second is read.
  const end = isEmptyCursor(bounds.until) ? OPEN_END : wallClock(bounds.until, zone);
  if (start === undefined || end === undefined) return undefined;
  return { type: 'condition', field: 'utime', operator: 'between', value: [start, end] };
}

/**
 * `filter AND condition` within the platform's two levels (group → group → condition,
 * each group's children all groups or all conditions [L, SKILL]). Returns undefined
 * when the job's filter leaves no room (an OR of OR groups): the read then goes
 * unfiltered and the rows are still checked client-side, which costs requests, never rows.
 */
export function andCondition(filter: Filter | undefined, condition: FilterCondition): Filter | undefined {
  if (filter === undefined) return { type: 'group', logic: 'AND', children: [condition] };
  if (filter.type === 'condition') return { type: 'group', logic: 'AND', children: [filter, condition] };
  const groups = filter.children.filter((c): c is FilterGroup => c.type === 'group');
  if (groups.length === 0) {
    if (filter.logic === 'AND') return { ...filter, children: [...filter.children, condition] };
    return {
      type: 'group',
      logic: 'AND',
      children: [filter, { type: 'group', logic: 'AND', children: [condition] }],
    };
  }
  if (filter.logic === 'AND')
    return {
      ...filter,
      children: [...filter.children, { type: 'group', logic: 'AND', children: [condition] }],
    };
  // (A or B) and c = (A and c) or (B and c), when each of A, B is an AND group.
  if (groups.some((g) => g.logic !== 'AND')) return undefined;
  return { ...filter, children: groups.map((g) => ({ ...g, children: [...g.children, condition] })) };
}
