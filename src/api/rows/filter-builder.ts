/**
 * Builds row-list filters (platform-shapes §8) and checks them against a worksheet's
 * structure. The check matters because the server silently ignores a condition whose
 * operator it does not know and answers with the unfiltered table [L, CLI]: a typo would
 * turn "rows of customer 42" into "every row". The same goes for the shape: at most two
 * levels (group, group, condition) and a group's children all groups or all conditions
 * [L, SKILL].
 */
import { fieldTypeName } from '../field-types.ts';
import {
  FILTER_OPERATORS,
  SYSTEM_FILTER_FIELDS,
  operatorsFor,
  systemFieldOperators,
} from '../filter-operators.ts';
import type { FilterOperator, SystemFilterField } from '../filter-operators.ts';
import type { Filter, FilterCondition, FilterGroup, WorksheetField, WorksheetStructure } from '../types.ts';
import { FilterError } from './row-errors.ts';

const KNOWN_OPERATORS: ReadonlySet<string> = new Set(FILTER_OPERATORS);
const LISTED_FIELDS = 30;

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    // BigInt or a cycle: the type is enough to tell the user what went wrong.
  }
  text ??= `a ${typeof value}`;
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/** What is wrong with a condition's value for its operator, or undefined when it fits. */
function valueProblem(operator: FilterOperator, value: unknown): string | undefined {
  switch (operator) {
    case 'between':
    case 'notbetween':
      return Array.isArray(value) && value.length === 2
        ? undefined
        : `needs a [min, max] array of 2 values, got ${show(value)}`;
    case 'in':
    case 'notin':
      // An empty list is refused: what the server does with it is not documented, and
      // "rowid in []" meaning "every row" would be the worst reading.
      return Array.isArray(value) && value.length > 0
        ? undefined
        : `needs a non-empty array of values, got ${show(value)}`;
    case 'isempty':
    case 'isnotempty':
      return value === undefined || value === null ? undefined : `takes no value, got ${show(value)}`;
    default:
      return value === undefined || value === null
        ? 'needs a value (use isempty / isnotempty to match empty cells)'
        : undefined;
  }
}

/** A condition on one field. `value` is omitted for `isempty` / `isnotempty`. */
export function where(field: string, operator: FilterOperator, value?: unknown): FilterCondition {
  const path = `where(${JSON.stringify(field)}, ${JSON.stringify(operator)})`;
  if (typeof field !== 'string' || field === '') {
    throw new FilterError(`filter ${path}: the field must be a non-empty field id or alias`, { path });
  }
  if (!KNOWN_OPERATORS.has(operator)) {
    throw new FilterError(
      `filter ${path}: "${String(operator)}" is not a platform operator; operators are ${FILTER_OPERATORS.join(', ')}`,
      { path, field, operator },
    );
  }
  const problem = valueProblem(operator, value);
  if (problem !== undefined) {
    throw new FilterError(`filter ${path}: field "${field}" with operator "${operator}" ${problem}`, {
      path,
      field,
      operator,
    });
  }
  return toWireCondition({ type: 'condition', field, operator, value });
}

/**
 * Condition values as the platform's examples send them: an array of strings, even for
 * one number (`ge ["10000"]`, platform-shapes §8 [L] and rows-list.json). `isempty` and
 * `isnotempty` carry no value. Objects are left as they are.
 */
export function toWireFilter(filter: Filter): Filter {
  if (filter.type === 'condition') return toWireCondition(filter);
  return { type: 'group', logic: filter.logic, children: filter.children.map(toWireFilter) };
}

function toWireCondition(condition: FilterCondition): FilterCondition {
  const { field, operator, value } = condition;
  if (operator === 'isempty' || operator === 'isnotempty' || value === undefined || value === null)
    return { type: 'condition', field, operator };
  const list: unknown[] = Array.isArray(value) ? value : [value];
  return { type: 'condition', field, operator, value: list.map(wireItem) };
}

function wireItem(item: unknown): unknown {
  return typeof item === 'number' || typeof item === 'bigint' || typeof item === 'boolean'
    ? String(item)
    : item;
}

const TOO_DEEP = 'is nested deeper than the two levels the platform reads (group, group, condition)';
const MIXED =
  'mixes groups and conditions; the children of one group must be all groups or all conditions (wrap the conditions in a group of their own)';

/** How the children of a group at `level` (the top group is 0) break the shape rules, or undefined. */
function shapeProblem(children: readonly unknown[], level: number): string | undefined {
  const isGroup = (child: unknown): boolean =>
    typeof child === 'object' && child !== null && (child as { type?: unknown }).type === 'group';
  const groups = children.filter(isGroup).length;
  if (groups > 0 && level >= 1) return TOO_DEEP;
  if (groups > 0 && groups < children.length) return MIXED;
  return undefined;
}

function group(logic: 'AND' | 'OR', children: Filter[]): FilterGroup {
  const path = `${logic.toLowerCase()}()`;
  if (children.length === 0) {
    // An empty group would match every row or none depending on the server; neither is
    // what a caller with an empty list of conditions meant to send.
    throw new FilterError(`filter ${path}: needs at least one condition`, { path });
  }
  // Built inside out: a child holding groups would put conditions on a third level.
  const problem = children.some((child) => depthOf(child) >= 2) ? TOO_DEEP : shapeProblem(children, 0);
  if (problem !== undefined) throw new FilterError(`filter ${path}: ${problem}`, { path });
  return { type: 'group', logic, children };
}

function depthOf(filter: Filter): number {
  return filter.type === 'group' ? 1 + Math.max(0, ...filter.children.map(depthOf)) : 0;
}

/** All of the children must match. */
export function and(...children: Filter[]): FilterGroup {
  return group('AND', children);
}

/** Any of the children may match. */
export function or(...children: Filter[]): FilterGroup {
  return group('OR', children);
}

/** How a v3 or row-level name is spelled in filters (platform notes §3 and §5). */
const FILTER_NAME_OF: ReadonlyMap<string, SystemFilterField> = new Map(
  Object.entries(SYSTEM_FILTER_FIELDS).map(([name, { v3 }]) => [v3, name as SystemFilterField]),
);

function isSystemFilterField(name: string): name is SystemFilterField {
  return Object.hasOwn(SYSTEM_FILTER_FIELDS, name);
}

interface FieldMatch {
  type: string;
  allowed: readonly FilterOperator[];
}

function resolveField(name: string, structure: WorksheetStructure, path: string, sheet: string): FieldMatch {
  const field: WorksheetField | undefined =
    structure.fields.find((f) => f.id === name) ?? structure.fields.find((f) => f.alias === name);
  if (field !== undefined) {
    const type = fieldTypeName(field.type);
    // A code outside the type table reads as CustomField: its operators are unknown too.
    if (type === undefined || type === 'CustomField') {
      throw new FilterError(
        `filter on ${sheet} at ${path}: field "${name}" has type "${field.type}", which rowbridge does not know, so its operators cannot be checked`,
        { path, field: name, fieldType: field.type },
      );
    }
    return { type, allowed: operatorsFor(type) };
  }
  if (isSystemFilterField(name)) {
    return { type: `system ${SYSTEM_FILTER_FIELDS[name].family}`, allowed: systemFieldOperators(name) };
  }
  const filterName = FILTER_NAME_OF.get(name);
  const hint = filterName === undefined ? '' : ` (filters name this system field "${filterName}")`;
  const known = structure.fields.map((f) => (f.alias !== undefined && f.alias !== '' ? f.alias : f.id));
  const listed = known.slice(0, LISTED_FIELDS).join(', ');
  const more = known.length > LISTED_FIELDS ? ` and ${known.length - LISTED_FIELDS} more` : '';
  throw new FilterError(
    `filter on ${sheet} at ${path}: field "${name}" is not in the worksheet${hint}; use a field id or alias (${listed}${more}) or a system field (${Object.keys(SYSTEM_FILTER_FIELDS).join(', ')})`,
    { path, field: name },
  );
}

function validateCondition(
  node: Record<string, unknown>,
  structure: WorksheetStructure,
  path: string,
  sheet: string,
) {
  const { field, operator } = node;
  if (typeof field !== 'string' || field === '') {
    throw new FilterError(
      `filter on ${sheet} at ${path}: a condition needs a field id or alias, got ${show(field)}`,
      {
        path,
      },
    );
  }
  const match = resolveField(field, structure, path, sheet);
  const described = `field "${field}" (${match.type})`;
  if (typeof operator !== 'string' || !match.allowed.includes(operator as FilterOperator)) {
    throw new FilterError(
      `filter on ${sheet} at ${path}: ${described} does not support operator ${show(operator)}; allowed: ${match.allowed.join(', ')}`,
      { path, field, fieldType: match.type, operator: String(operator), allowed: match.allowed },
    );
  }
  const problem = valueProblem(operator as FilterOperator, node.value);
  if (problem !== undefined) {
    throw new FilterError(
      `filter on ${sheet} at ${path}: ${described} with operator "${operator}" ${problem}`,
      {
        path,
        field,
        fieldType: match.type,
        operator,
        allowed: match.allowed,
      },
    );
  }
}

function validateNode(
  node: unknown,
  structure: WorksheetStructure,
  path: string,
  sheet: string,
  level: number,
): void {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) {
    throw new FilterError(
      `filter on ${sheet} at ${path}: expected a condition or a group object, got ${show(node)}`,
      {
        path,
      },
    );
  }
  const record = node as Record<string, unknown>;
  if (record.type === 'condition') return validateCondition(record, structure, path, sheet);
  if (record.type !== 'group') {
    throw new FilterError(
      `filter on ${sheet} at ${path}: type must be "condition" or "group", got ${show(record.type)}`,
      { path },
    );
  }
  if (record.logic !== 'AND' && record.logic !== 'OR') {
    throw new FilterError(
      `filter on ${sheet} at ${path}: group logic must be "AND" or "OR", got ${show(record.logic)}`,
      {
        path,
      },
    );
  }
  const children = record.children;
  if (!Array.isArray(children) || children.length === 0) {
    throw new FilterError(`filter on ${sheet} at ${path}: a group needs a non-empty children array`, {
      path,
    });
  }
  const problem = shapeProblem(children, level);
  if (problem !== undefined)
    throw new FilterError(`filter on ${sheet} at ${path}: the group ${problem}`, { path });
  children.forEach((child, i) => validateNode(child, structure, `${path}.children[${i}]`, sheet, level + 1));
}

/**
 * Throws a {@link FilterError} when the filter names a field the worksheet does not have,
 * uses an operator the field's type does not support (`operatorsFor`, or
 * `systemFieldOperators` for rowid ctime utime caid uaid ownerid autoid; the message
 * lists the allowed ones), gives a value of the wrong shape for its operator, nests
 * deeper than two levels or mixes groups and conditions in one group. Fields match by id
 * or alias. `path` names the filter in the message (a job spec's `source.filter`).
 */
export function validateFilter(filter: Filter, structure: WorksheetStructure, path = 'filter'): void {
  validateNode(filter, structure, path, `worksheet "${structure.name}"`, 0);
}
