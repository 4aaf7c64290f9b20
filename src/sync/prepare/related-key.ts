/**
 * How a relation lookup matches source values with the related worksheet's key field.
 * Both sides are compared in canonical form, as the key index compares keys
 * (mapping/canonical-value.ts): a precision-2 Number key reads back "42.00" and still
 * matches a source 42. Select and member keys are compared by their text, the only form a
 * source holds: a select's text is resolved to its option key, a member's name is looked
 * up to narrow the read, and the row is matched by the member's full name.
 */
import { fieldTypeName } from '../../api/field-types.ts';
import type { Filter, WorksheetField } from '../../api/types.ts';
import type { ZoneClock } from '../../api/zone-clock.ts';
import { canonicalValue } from '../mapping/canonical-value.ts';
import type { CanonicalField } from '../mapping/canonical-value.ts';
import { createOptionIndex, findOption } from '../mapping/option-index.ts';

/** The matching rules of one related key field. */
export interface RelatedKey {
  /** A read narrowed to rows that may hold one of `values`; undefined when none can. */
  filter(values: readonly string[]): Promise<Filter | undefined>;
  /** Canonical text of a source value. */
  ofSource(value: string): string;
  /** Canonical text of the key as a related row holds it. */
  ofRow(value: unknown): string;
}

const SELECTS: ReadonlySet<string> = new Set(['SingleSelect', 'Dropdown', 'MultipleSelect']);

/** A filter matching rows whose `field` equals any of `values`: a group at the top, as the platform wants (platform-shapes §8 [L]). */
export function anyOf(field: string, values: readonly string[]): Filter {
  return {
    type: 'group',
    logic: 'OR',
    children: values.map((value) => ({ type: 'condition', field, operator: 'eq', value })),
  };
}

/** `in` over a select's option keys or a member field's account ids, inside a group (platform-shapes §8). */
function anyIn(field: string, ids: readonly string[]): Filter | undefined {
  if (ids.length === 0) return undefined;
  return {
    type: 'group',
    logic: 'AND',
    children: [{ type: 'condition', field, operator: 'in', value: [...ids] }],
  };
}

/** A member cell as text: its members' full names, sorted (the read form is [{accountId, fullname}]). */
function memberNames(value: unknown): string {
  const items: unknown[] = Array.isArray(value)
    ? value
    : value === undefined || value === null
      ? []
      : [value];
  const names = items.map((item) => {
    if (typeof item === 'string') return item.trim();
    const o = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    const name = o.fullname ?? o.name;
    return typeof name === 'string' ? name.trim() : '';
  });
  return [...new Set(names.filter((n) => n !== ''))].sort().join('\u001f');
}

/**
 * The rules for `field`; `memberIds` finds the account ids of exact full names (the
 * users lookup), for member keys only.
 */
export function createRelatedKey(
  field: WorksheetField,
  clock: ZoneClock,
  memberIds: (names: readonly string[]) => Promise<string[]>,
): RelatedKey {
  const type = fieldTypeName(field.type);
  if (type === 'Collaborator') {
    return {
      filter: async (values) => anyIn(field.id, await memberIds(values)),
      ofSource: (value) => value.trim(),
      ofRow: memberNames,
    };
  }
  const canonical: CanonicalField | undefined =
    type === undefined
      ? undefined
      : {
          type,
          precision: field.precision,
          options: SELECTS.has(type) ? createOptionIndex(field.options) : undefined,
        };
  const canon = (value: unknown): string =>
    canonical === undefined ? String(value) : canonicalValue(canonical, value, clock);
  const options = canonical?.options;
  if (options !== undefined) {
    return {
      filter: (values) =>
        Promise.resolve(
          anyIn(
            field.id,
            values.flatMap((v) => findOption(options, v.trim())?.key ?? []),
          ),
        ),
      ofSource: canon,
      ofRow: canon,
    };
  }
  return {
    filter: (values) => Promise.resolve(anyOf(field.id, values)),
    ofSource: canon,
    ofRow: canon,
  };
}
