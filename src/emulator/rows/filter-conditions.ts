/**
 * One filter condition compiled to a predicate, with the operator semantics of platform
 * notes §3 per field family: text-like, number-like, select/member/relation (`in` is
 * "any of", `eq`/`ne` compare the whole set, `concurrent` is "all of"), department and
 * region (`belongsto` includes descendants), dates (`between` with `[start, end]`,
 * inclusive) and the system fields. Date and time conditions are compiled in
 * date-time-conditions.ts; operands are read by condition-operands.ts.
 */
import type { FilterOperator } from '../field-kinds.ts';
import type { StoredRow } from '../state/records.ts';
import { scalarList, toNumber, range, oneValue } from './condition-operands.ts';
import { dateCondition, timeCondition } from './date-time-conditions.ts';

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
