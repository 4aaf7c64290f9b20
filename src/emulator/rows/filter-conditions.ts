/**
 * One filter condition compiled to a predicate, with the operator semantics of platform
 * notes §3 per field family: text-like, number-like, select/member/relation (`in` is
 * "any of", `eq`/`ne` compare the whole set, `concurrent` is "all of"), department and
 * region (`belongsto` includes descendants), dates (`between` with `[start, end]`,
 * inclusive) and the system fields.
 */
import type { FilterOperator } from '../field-kinds.ts';
import { paramError } from '../emulator-error.ts';
import { describe } from '../input.ts';
import type { StoredRow } from '../state/records.ts';

export type Predicate = (row: StoredRow) => boolean;

/** How a filter field's value is read and compared. */
export type FilterTarget =
  | { family: 'text'; label: string; get: (row: StoredRow) => string | undefined }
  | { family: 'id'; label: string }
  | { family: 'number'; label: string; get: (row: StoredRow) => number | undefined }
  | {
      family: 'set';
      label: string;
      get: (row: StoredRow) => readonly string[];
      parentOf?: (id: string) => string | null | undefined;
    }
  | { family: 'date'; label: string; get: (row: StoredRow) => string | undefined }
  | { family: 'time'; label: string; get: (row: StoredRow) => number }
  | { family: 'presence'; label: string; get: (row: StoredRow) => unknown };

function scalarList(value: unknown, label: string, op: string): string[] {
  const items = Array.isArray(value) ? value : [value];
  return items.map((item) => {
    if (typeof item === 'string') return item;
    if (typeof item === 'number' || typeof item === 'boolean') return String(item);
    throw paramError(
      `filter on ${label}: operator "${op}" takes a string or an array of strings, got ${describe(item)}`,
    );
  });
}

function toNumber(value: unknown, label: string, op: string): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n))
    throw paramError(`filter on ${label}: operator "${op}" takes a number, got ${describe(value)}`);
  return n;
}

function range(value: unknown, label: string, op: string): [unknown, unknown] {
  if (!Array.isArray(value) || value.length !== 2)
    throw paramError(`filter on ${label}: operator "${op}" takes [min, max], got ${describe(value)}`);
  return [value[0], value[1]];
}

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

/**
 * A comparison's one value: the platform's generator and guides send even a number as a
 * one-element array of strings (`ge ["10000"]`, platform-shapes §8 [L]).
 */
function oneValue(value: unknown, label: string, op: string): unknown {
  if (!Array.isArray(value)) return value;
  if (value.length !== 1)
    throw paramError(`filter on ${label}: operator "${op}" takes one value, got ${describe(value)}`);
  return value[0];
}

function isEmptyValue(value: unknown): boolean {
  return (
    value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0)
  );
}

function textCondition(
  get: (row: StoredRow) => string | undefined,
  op: FilterOperator,
  value: unknown,
  label: string,
): Predicate {
  const wanted = scalarList(value, label, op);
  const lower = wanted.map((w) => w.toLowerCase());
  const text = (row: StoredRow): string => (get(row) ?? '').toLowerCase();
  switch (op) {
    case 'eq':
      return (row) => wanted.includes(get(row) ?? '');
    case 'ne':
      return (row) => !wanted.includes(get(row) ?? '');
    case 'contains':
      return (row) => lower.some((w) => text(row).includes(w));
    case 'notcontains':
      return (row) => !lower.some((w) => text(row).includes(w));
    case 'startswith':
      return (row) => lower.some((w) => text(row).startsWith(w));
    case 'notstartswith':
      return (row) => !lower.some((w) => text(row).startsWith(w));
    case 'endswith':
      return (row) => lower.some((w) => text(row).endsWith(w));
    case 'notendswith':
      return (row) => !lower.some((w) => text(row).endsWith(w));
    default:
      return (row) => lower.every((w) => text(row).includes(w)); // concurrent: all of
  }
}

function numberCondition(
  get: (row: StoredRow) => number | undefined,
  op: FilterOperator,
  value: unknown,
  label: string,
): Predicate {
  if (op === 'between' || op === 'notbetween') {
    const [lo, hi] = range(value, label, op).map((v) => toNumber(v, label, op)) as [number, number];
    const inside = (row: StoredRow): boolean => {
      const n = get(row);
      return n !== undefined && n >= lo && n <= hi;
    };
    return op === 'between' ? inside : (row) => !inside(row);
  }
  if ((op === 'eq' || op === 'ne') && Array.isArray(value) && value.length > 1) {
    const anyOf = value.map((v) => toNumber(v, label, op));
    const hit = (row: StoredRow): boolean => {
      const n = get(row);
      return n !== undefined && anyOf.includes(n);
    };
    return op === 'eq' ? hit : (row) => !hit(row);
  }
  const bound = toNumber(oneValue(value, label, op), label, op);
  const compare: Record<string, (n: number) => boolean> = {
    eq: (n) => n === bound,
    gt: (n) => n > bound,
    ge: (n) => n >= bound,
    lt: (n) => n < bound,
    le: (n) => n <= bound,
  };
  if (op === 'ne') return (row) => get(row) !== bound;
  const test = compare[op] ?? (() => false);
  return (row) => {
    const n = get(row);
    return n !== undefined && test(n);
  };
}

function setCondition(
  target: Extract<FilterTarget, { family: 'set' }>,
  op: FilterOperator,
  value: unknown,
): Predicate {
  const wanted = new Set(scalarList(value, target.label, op));
  const get = target.get;
  const sameSet = (row: StoredRow): boolean => {
    const have = get(row);
    return have.length === wanted.size && have.every((v) => wanted.has(v));
  };
  const belongs = (id: string): boolean => {
    for (
      let at: string | null | undefined = id, hops = 0;
      at != null && hops < 64;
      at = target.parentOf?.(at), hops += 1
    ) {
      if (wanted.has(at)) return true;
    }
    return false;
  };
  switch (op) {
    case 'in':
      return (row) => get(row).some((v) => wanted.has(v));
    case 'notin':
      return (row) => !get(row).some((v) => wanted.has(v));
    case 'eq':
      return sameSet;
    case 'ne':
      return (row) => !sameSet(row);
    case 'belongsto':
      return (row) => get(row).some(belongs);
    case 'notbelongsto':
      return (row) => !get(row).some(belongs);
    default:
      return (row) => [...wanted].every((w) => get(row).includes(w)); // concurrent: all of
  }
}

function dateCondition(
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

function timeCondition(
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

/** Compiles a condition whose operator is known to be valid for its target. */
export function compileCondition(
  target: FilterTarget,
  op: FilterOperator,
  value: unknown,
  timeZone: string,
): Predicate {
  if (op === 'isempty' || op === 'isnotempty') {
    const empty = (row: StoredRow): boolean => {
      switch (target.family) {
        case 'id':
          return false;
        case 'set':
          return target.get(row).length === 0;
        default:
          return isEmptyValue(target.get(row));
      }
    };
    return op === 'isempty' ? empty : (row) => !empty(row);
  }
  switch (target.family) {
    case 'id': {
      const ids = new Set(scalarList(value, target.label, op));
      const inside = (row: StoredRow): boolean => ids.has(row.id);
      return op === 'eq' || op === 'in' ? inside : (row) => !inside(row);
    }
    case 'text':
      return textCondition(target.get, op, value, target.label);
    case 'number':
      return numberCondition(target.get, op, value, target.label);
    case 'set':
      return setCondition(target, op, value);
    case 'date':
      return dateCondition(target.get, op, value, target.label);
    case 'time':
      return timeCondition(target.get, op, value, target.label, timeZone);
    case 'presence':
      return () => true;
  }
}
