/**
 * Row-list filters (platform notes §3): a tree of AND/OR groups and conditions on fields
 * (by id or alias) and system fields (`rowid ctime utime caid uaid ownerid autoid`, or
 * their v3 names). A condition whose operator the field's type does not support is
 * dropped, as the real server does, unless `strictOperators` makes it error 10001.
 * An unknown field is always 10001.
 */
import {
  FILTER_OPERATORS,
  operatorsFor,
  SYSTEM_FILTER_FIELDS,
  systemFieldOperators,
} from '../field-kinds.ts';
import type { FilterOperator, SystemFilterField } from '../field-kinds.ts';
import { paramError } from '../emulator-error.ts';
import { asArray, asObject, asString, describe, optionalString } from '../input.ts';
import type { EmulatorState, FieldRecord, StoredRow, WorksheetRecord } from '../state/records.ts';
import { compileCondition } from './filter-conditions.ts';
import type { FilterTarget, Predicate } from './filter-conditions.ts';
import { uniqueHolder, uniqueKey } from './row-table.ts';
import { fieldLabel } from './field-label.ts';

const V3_SYSTEM_NAMES: Readonly<Record<string, SystemFilterField>> = {
  id: 'rowid',
  _createdAt: 'ctime',
  _updatedAt: 'utime',
  _createdBy: 'caid',
  _updatedBy: 'uaid',
  _owner: 'ownerid',
  _autoId: 'autoid',
};

const KNOWN_OPERATORS: ReadonlySet<string> = new Set(FILTER_OPERATORS);

export interface ResolvedTarget {
  target: FilterTarget;
  operators: readonly FilterOperator[];
  field: FieldRecord | undefined;
}

function list(value: unknown): readonly string[] {
  return Array.isArray(value) ? (value as string[]) : [];
}

function fieldTarget(state: EmulatorState, field: FieldRecord): FilterTarget {
  const label = fieldLabel(field);
  const ops = operatorsFor(field.type);
  const raw = (row: StoredRow): unknown => row.values[field.id];
  if (ops.includes('contains')) {
    if (field.type === 'AutoNumber') return { family: 'text', label, get: (row) => String(row.autoId) };
    return {
      family: 'text',
      label,
      get: (row) => {
        const v = raw(row);
        return typeof v === 'string' ? v : undefined;
      },
    };
  }
  if (ops.includes('gt'))
    return {
      family: 'number',
      label,
      get: (row) => {
        const v = raw(row);
        return typeof v === 'number' ? v : undefined;
      },
    };
  if (ops.includes('in')) {
    if (field.type === 'Region') {
      return {
        family: 'set',
        label,
        get: (row) => {
          const v = raw(row);
          return typeof v === 'string' ? [v] : [];
        },
        parentOf: (code) => state.regions.get(code)?.parentCode,
      };
    }
    const parentOf =
      field.type === 'Department' ? (id: string) => state.departments.get(id)?.parentId : undefined;
    return parentOf === undefined
      ? { family: 'set', label, get: (row) => list(raw(row)) }
      : { family: 'set', label, get: (row) => list(raw(row)), parentOf };
  }
  if (ops.includes('between')) {
    return {
      family: 'date',
      label,
      get: (row) => {
        const v = raw(row);
        return typeof v === 'string' ? v : Array.isArray(v) ? (v[0] as string) : undefined;
      },
    };
  }
  return { family: 'presence', label, get: raw };
}

function systemTarget(name: SystemFilterField): FilterTarget {
  const label = `system field "${name}"`;
  switch (name) {
    case 'rowid':
      return { family: 'id', label };
    case 'ctime':
      return { family: 'time', label, get: (row) => row.createdAt };
    case 'utime':
      return { family: 'time', label, get: (row) => row.updatedAt };
    case 'caid':
      return { family: 'set', label, get: (row) => [row.createdBy.accountId] };
    case 'uaid':
      return { family: 'set', label, get: (row) => [row.updatedBy.accountId] };
    case 'ownerid':
      return { family: 'set', label, get: (row) => [row.owner.accountId] };
    case 'autoid':
      return { family: 'number', label, get: (row) => row.autoId };
  }
}

/** A field or system field of a filter or sort, by id, alias, old or v3 system name. */
export function resolveTarget(
  state: EmulatorState,
  ws: WorksheetRecord,
  name: string,
  where: string,
): ResolvedTarget {
  const field = ws.byKey.get(name);
  if (field !== undefined)
    return { target: fieldTarget(state, field), operators: operatorsFor(field.type), field };
  const system = (name in SYSTEM_FILTER_FIELDS ? name : V3_SYSTEM_NAMES[name]) as
    SystemFilterField | undefined;
  if (system !== undefined)
    return { target: systemTarget(system), operators: systemFieldOperators(system), field: undefined };
  throw paramError(
    `${where}: "${name}" is not a field of worksheet "${ws.name}" nor a system field (${Object.keys(SYSTEM_FILTER_FIELDS).join(', ')})`,
  );
}

export interface CompiledFilter {
  test: Predicate | undefined;
  /** Ids the matches must be among, when a top-level condition pins them (rowid, unique field). */
  candidates: string[] | undefined;
}

export function compileFilter(
  state: EmulatorState,
  ws: WorksheetRecord,
  raw: unknown,
  strict: boolean,
  timeZone = 'UTC',
): CompiledFilter {
  if (raw === undefined || raw === null) return { test: undefined, candidates: undefined };
  const candidates: string[][] = [];

  function node(value: unknown, where: string, topLevelAnd: boolean): Predicate | undefined {
    const obj = asObject(value, where);
    const isGroup = obj['type'] === 'group' || (obj['type'] === undefined && Array.isArray(obj['children']));
    if (isGroup) {
      const logic = optionalString(obj['logic'], `${where}.logic`, 'AND').toUpperCase();
      if (logic !== 'AND' && logic !== 'OR')
        throw paramError(`${where}.logic must be "AND" or "OR", got ${describe(obj['logic'])}`);
      const children = asArray(obj['children'], `${where}.children`)
        .map((child, i) => node(child, `${where}.children[${i}]`, topLevelAnd && logic === 'AND'))
        .filter((p): p is Predicate => p !== undefined);
      if (children.length === 0) return undefined;
      if (children.length === 1) return children[0];
      return logic === 'AND' ? (row) => children.every((p) => p(row)) : (row) => children.some((p) => p(row));
    }
    const name = asString(obj['field'], `${where}.field`);
    const operator = asString(obj['operator'], `${where}.operator`);
    const resolved = resolveTarget(state, ws, name, `${where}.field`);
    if (!KNOWN_OPERATORS.has(operator) || !resolved.operators.includes(operator as FilterOperator)) {
      if (!strict) return undefined; // the platform drops it silently (platform notes §3 [C])
      throw paramError(
        `${where}: operator "${operator}" is not valid for ${resolved.target.label}; allowed: ${resolved.operators.join(', ')}`,
      );
    }
    const op = operator as FilterOperator;
    if (topLevelAnd) {
      const pinned = pinnedIds(ws, resolved, op, obj['value']);
      if (pinned !== undefined) candidates.push(pinned);
    }
    return compileCondition(resolved.target, op, obj['value'], timeZone);
  }

  const test = node(raw, 'filter', true);
  const shortest = candidates.sort((a, b) => a.length - b.length)[0];
  return { test, candidates: shortest };
}

/** Rows a condition can only match: by row id, or through a unique field's index. */
function pinnedIds(
  ws: WorksheetRecord,
  resolved: ResolvedTarget,
  op: FilterOperator,
  value: unknown,
): string[] | undefined {
  const values = Array.isArray(value) ? value : [value];
  if (!values.every((v) => typeof v === 'string' || typeof v === 'number')) return undefined;
  if (resolved.target.family === 'id' && (op === 'eq' || op === 'in')) return values.map(String);
  const field = resolved.field;
  if (
    field?.isUnique !== true ||
    op !== 'eq' ||
    (resolved.target.family !== 'text' && resolved.target.family !== 'number')
  )
    return undefined;
  const ids: string[] = [];
  for (const v of values) {
    const key = uniqueKey(typeof v === 'string' && resolved.target.family === 'number' ? Number(v) : v);
    const holder = key === undefined ? undefined : uniqueHolder(ws.table, field.id, key);
    if (holder !== undefined) ids.push(holder);
  }
  return ids;
}
