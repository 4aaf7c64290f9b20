/**
 * Field types of API v3 worksheets (platform-shapes §4): the names, their wire codes and the
 * families the writer cares about (read-only, array-valued, option types). The structure
 * schema types `type` as a name ("Text"); the export's own example still sends V2 integer
 * codes (2), and the seed spec wrote code strings ("2"). All three are accepted everywhere
 * through {@link fieldTypeName}. The filter operators each type supports live apart in
 * filter-operators.ts.
 */

export const FIELD_TYPE_NAMES = [
  'Text',
  'PhoneNumber',
  'LandlinePhone',
  'Email',
  'Number',
  'Certificate',
  'Currency',
  'SingleSelect',
  'MultipleSelect',
  'Dropdown',
  'Attachment',
  'Date',
  'DateTime',
  'DateRange',
  'Region',
  'DynamicLink',
  'AmountInWords',
  'Collaborator',
  'Department',
  'Rating',
  'Relation',
  'Lookup',
  'Formula',
  'Concatenate',
  'AutoNumber',
  'SubTable',
  'CascadingSelect',
  'Checkbox',
  'Rollup',
  'DateFormula',
  'Location',
  'RichText',
  'Signature',
  'Time',
  'OrgRole',
  'FunctionFormula',
  'Divider',
  'CodeScan',
  'OCR',
  'Role',
  'Embed',
  'Barcode',
  'Button',
  'APIQuery',
  'QueryRecord',
  'Section',
  'CustomField',
] as const;

export type FieldTypeName = (typeof FIELD_TYPE_NAMES)[number];

/** Numeric wire codes → names (platform-shapes §4 [C], FE `convertControl`). Any other code is `CustomField`. */
export const FIELD_TYPE_CODES: Readonly<Record<number, FieldTypeName>> = {
  2: 'Text',
  3: 'PhoneNumber',
  4: 'LandlinePhone',
  5: 'Email',
  6: 'Number',
  7: 'Certificate',
  8: 'Currency',
  9: 'SingleSelect',
  10: 'MultipleSelect',
  11: 'Dropdown',
  14: 'Attachment',
  15: 'Date',
  16: 'DateTime',
  17: 'DateRange',
  18: 'DateRange',
  19: 'Region',
  21: 'DynamicLink',
  22: 'Divider',
  23: 'Region',
  24: 'Region',
  25: 'AmountInWords',
  26: 'Collaborator',
  27: 'Department',
  28: 'Rating',
  29: 'Relation',
  30: 'Lookup',
  31: 'Formula',
  32: 'Concatenate',
  33: 'AutoNumber',
  34: 'SubTable',
  35: 'CascadingSelect',
  36: 'Checkbox',
  37: 'Rollup',
  38: 'DateFormula',
  39: 'CodeScan',
  40: 'Location',
  41: 'RichText',
  42: 'Signature',
  43: 'OCR',
  44: 'Role',
  45: 'Embed',
  46: 'Time',
  47: 'Barcode',
  48: 'OrgRole',
  49: 'Button',
  50: 'APIQuery',
  51: 'QueryRecord',
  52: 'Section',
  53: 'FunctionFormula',
  10010: 'RichText',
};

const NAME_TO_CODE: ReadonlyMap<FieldTypeName, number> = new Map(
  Object.entries(FIELD_TYPE_CODES)
    .reverse() // the first code listed for a name wins (17 for DateRange, 19 for Region)
    .map(([code, name]) => [name, Number(code)] as const),
);

const NAMES: ReadonlySet<string> = new Set(FIELD_TYPE_NAMES);

/**
 * Resolves a type given as a name ("Text"), a numeric code (2) or a code string ("2").
 * A code outside the table is `CustomField` (platform-shapes §4 [C]); a name rowbridge
 * does not know is undefined.
 */
export function fieldTypeName(type: string | number): FieldTypeName | undefined {
  if (typeof type === 'number')
    return Number.isInteger(type) ? (FIELD_TYPE_CODES[type] ?? 'CustomField') : undefined;
  if (NAMES.has(type)) return type as FieldTypeName;
  if (/^\s*\d+\s*$/.test(type)) return FIELD_TYPE_CODES[Number(type)] ?? 'CustomField';
  return undefined;
}

/** The numeric wire code of a type name (CustomField has none). */
export function fieldTypeCode(name: FieldTypeName): number {
  const code = NAME_TO_CODE.get(name);
  if (code === undefined) throw new Error(`field type ${name} has no code`);
  return code;
}

/** Computed types: the platform rejects writes to them. */
export const READ_ONLY_FIELD_TYPES: ReadonlySet<FieldTypeName> = new Set([
  'Lookup',
  'Formula',
  'Concatenate',
  'AutoNumber',
  'Rollup',
  'DateFormula',
  'AmountInWords',
  'FunctionFormula',
]);

export function isReadOnlyFieldType(name: FieldTypeName): boolean {
  return READ_ONLY_FIELD_TYPES.has(name);
}

/** Types whose value is written as an array (option keys, ids, accounts, attachments). */
export const ARRAY_VALUED_FIELD_TYPES: ReadonlySet<FieldTypeName> = new Set([
  'SingleSelect',
  'MultipleSelect',
  'Dropdown',
  'Collaborator',
  'Department',
  'Relation',
  'Attachment',
  'OrgRole',
  'CascadingSelect',
]);

export const OPTION_FIELD_TYPES: ReadonlySet<FieldTypeName> = new Set([
  'SingleSelect',
  'MultipleSelect',
  'Dropdown',
]);
