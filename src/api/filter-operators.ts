/**
 * The filter operators of API v3 row queries and which of them each field type and each
 * system field supports (platform-shapes §8). Kept apart from the field-type name tables
 * because only the filter builder, its errors and the job-spec schema need them.
 */
import type { FieldTypeName } from './field-types.ts';

export const FILTER_OPERATORS = [
  'eq',
  'ne',
  'contains',
  'notcontains',
  'startswith',
  'notstartswith',
  'endswith',
  'notendswith',
  'concurrent',
  'isempty',
  'isnotempty',
  'gt',
  'ge',
  'lt',
  'le',
  'between',
  'notbetween',
  'in',
  'notin',
  'belongsto',
  'notbelongsto',
] as const;

export type FilterOperator = (typeof FILTER_OPERATORS)[number];

const TEXT_OPS: readonly FilterOperator[] = [
  'eq',
  'ne',
  'contains',
  'notcontains',
  'startswith',
  'notstartswith',
  'endswith',
  'notendswith',
  'concurrent',
  'isempty',
  'isnotempty',
];
const NUMBER_OPS: readonly FilterOperator[] = [
  'eq',
  'ne',
  'gt',
  'ge',
  'lt',
  'le',
  'between',
  'notbetween',
  'isempty',
  'isnotempty',
];
const SELECT_OPS: readonly FilterOperator[] = [
  'in',
  'notin',
  'eq',
  'ne',
  'concurrent',
  'isempty',
  'isnotempty',
];
const HIERARCHY_OPS: readonly FilterOperator[] = [...SELECT_OPS, 'belongsto', 'notbelongsto'];
// platform-shapes §8 [C]: no eq/ne/concurrent for a region or a cascading select.
const REGION_OPS: readonly FilterOperator[] = [
  'in',
  'notin',
  'belongsto',
  'notbelongsto',
  'isempty',
  'isnotempty',
];
// platform notes §3: for dates only between/notbetween are confirmed; the rest are [U].
const DATE_OPS: readonly FilterOperator[] = ['between', 'notbetween', 'isempty', 'isnotempty'];
const EMPTINESS_OPS: readonly FilterOperator[] = ['isempty', 'isnotempty'];

/** Filter operators each field type supports (platform-shapes §8 [C]). */
export function operatorsFor(name: FieldTypeName): readonly FilterOperator[] {
  switch (name) {
    case 'Text':
    case 'PhoneNumber':
    case 'LandlinePhone':
    case 'Email':
    case 'Certificate':
    case 'Concatenate':
    case 'AutoNumber':
      return TEXT_OPS;
    // AmountInWords reads as a number (platform-shapes §6) and filters like one (§8).
    case 'AmountInWords':
    case 'Number':
    case 'Currency':
    case 'Rating':
    case 'Formula':
    case 'Rollup':
    case 'FunctionFormula':
      return NUMBER_OPS;
    case 'SingleSelect':
    case 'MultipleSelect':
    case 'Dropdown':
    case 'Collaborator':
    case 'Relation':
    case 'OrgRole':
      return SELECT_OPS;
    case 'Department':
      return HIERARCHY_OPS;
    case 'Region':
    case 'CascadingSelect':
      return REGION_OPS;
    case 'Date':
    case 'DateTime':
    case 'Time':
    case 'DateRange':
    case 'DateFormula':
      return DATE_OPS;
    case 'Attachment':
    case 'Checkbox':
    case 'RichText':
    case 'SubTable':
    case 'Location':
    case 'Signature':
    case 'Lookup':
    case 'DynamicLink':
    case 'CodeScan':
    case 'OCR':
    case 'Barcode':
    case 'Embed':
    case 'Role':
    case 'QueryRecord':
    case 'APIQuery':
      return EMPTINESS_OPS;
    // Layout and action controls hold no value to filter on.
    case 'Divider':
    case 'Section':
    case 'Button':
    case 'CustomField':
      return [];
  }
}

/**
 * System fields usable in filters and sorts (platform notes §3), with the v3 names the
 * spec uses for the same fields (spec §2).
 */
export const SYSTEM_FILTER_FIELDS = {
  rowid: { v3: 'id', family: 'text' },
  ctime: { v3: '_createdAt', family: 'date' },
  utime: { v3: '_updatedAt', family: 'date' },
  caid: { v3: '_createdBy', family: 'member' },
  uaid: { v3: '_updatedBy', family: 'member' },
  ownerid: { v3: '_owner', family: 'member' },
  autoid: { v3: '_autoId', family: 'number' },
} as const;

export type SystemFilterField = keyof typeof SYSTEM_FILTER_FIELDS;

/** Operators of the system filter fields. rowid takes `in` for fetching rows by id [L]. */
export function systemFieldOperators(field: SystemFilterField): readonly FilterOperator[] {
  switch (SYSTEM_FILTER_FIELDS[field].family) {
    case 'text':
      return ['eq', 'ne', 'in', 'notin'];
    case 'date':
      return [...DATE_OPS, 'gt', 'ge', 'lt', 'le'];
    case 'member':
      return SELECT_OPS;
    case 'number':
      return NUMBER_OPS;
  }
}
