/**
 * Conditions on dates and times (platform notes §3). Date fields compare their stored
 * text on the bound's own precision; the system times (`_createdAt`, `_updatedAt`) compare
 * instants, so their bounds need a zone: that zone arithmetic is why these live apart from
 * the text, number and set conditions.
 */
import type { FilterOperator } from '../field-kinds.ts';
import { paramError } from '../emulator-error.ts';
import { describe } from '../input.ts';
import type { StoredRow } from '../state/records.ts';
import { oneValue, range, scalarList } from './condition-operands.ts';

type Predicate = (row: StoredRow) => boolean;

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const WALL_CLOCK = /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/** How far a zone's wall clock is ahead of UTC at an instant, in ms. */
function zoneOffset(epochMs: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(epochMs));
  const at = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const wall = Date.UTC(at('year'), at('month') - 1, at('day'), at('hour'), at('minute'), at('second'));
  return wall - Math.floor(epochMs / 1000) * 1000;
}

/** The instant of a zone-less wall clock in a zone (two passes settle a DST change). */
function wallClockInstant(text: string, timeZone: string): number | undefined {
  const m = WALL_CLOCK.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h = '0', mi = '0', sec = '0'] = m;
  const naive = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec));
  if (Number.isNaN(naive)) return undefined;
  const first = naive - zoneOffset(naive, timeZone);
  return naive - zoneOffset(first, timeZone);
}

/**
 * A time bound in epoch ms: ISO 8601 with a zone, a zone-less "YYYY-MM-DD HH:mm:ss" read
 * in `timeZone` (the zone `_createdAt`/`_updatedAt` are served in, so a bound copied from
 * a row means the same instant), or a day (its start, or its end for upper bounds).
 */
function timeBound(value: unknown, label: string, upper: boolean, timeZone: string): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    const text = value.trim();
    const wall = wallClockInstant(text, timeZone);
    if (wall !== undefined) return wall + (DATE_ONLY.test(text) && upper ? 86_399_999 : 0);
    const ms = Date.parse(text);
    if (!Number.isNaN(ms)) return ms;
  }
  throw paramError(`filter on ${label}: ${describe(value)} is not a time (ISO 8601 or YYYY-MM-DD HH:mm:ss)`);
}

/** `between`/`notbetween` on a date field's stored text, `[start, end]` inclusive. */
export function dateCondition(
  get: (row: StoredRow) => string | undefined,
  op: FilterOperator,
  value: unknown,
  label: string,
): Predicate {
  const [start, end] = range(value, label, op).map((v) => scalarList(v, label, op)[0] ?? '') as [
    string,
    string,
  ];
  // Compare on the bound's own precision: a day as the end includes the whole day.
  const inside = (row: StoredRow): boolean => {
    const v = get(row);
    return v !== undefined && v.slice(0, start.length) >= start && v.slice(0, end.length) <= end;
  };
  return op === 'between' ? inside : (row) => !inside(row);
}

/** A range or comparison on a system time, its bounds read in `timeZone`. */
export function timeCondition(
  get: (row: StoredRow) => number,
  op: FilterOperator,
  value: unknown,
  label: string,
  timeZone: string,
): Predicate {
  if (op === 'between' || op === 'notbetween') {
    const [a, b] = range(value, label, op);
    const lo = timeBound(a, label, false, timeZone);
    const hi = timeBound(b, label, true, timeZone);
    return op === 'between'
      ? (row) => get(row) >= lo && get(row) <= hi
      : (row) => get(row) < lo || get(row) > hi;
  }
  const bound = timeBound(oneValue(value, label, op), label, op === 'le' || op === 'gt', timeZone);
  if (op === 'gt') return (row) => get(row) > bound;
  if (op === 'ge') return (row) => get(row) >= bound;
  if (op === 'lt') return (row) => get(row) < bound;
  return (row) => get(row) <= bound;
}
