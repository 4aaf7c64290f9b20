/**
 * The emulator's own table of field kinds, written from the fact sheet
 * (shared/spec/platform-shapes.md §4 type names and codes, §8 operators per family) and
 * the seed spec, not taken from the client: a client that misreads the platform must not
 * find its misreading mirrored by its own test double.
 */

/** Type name → wire code (platform-shapes §4 [C]; several names have more than one code). */
const CODES = {
  Text: [2],
  PhoneNumber: [3],
  LandlinePhone: [4],
  Email: [5],
  Number: [6],
  Certificate: [7],
  Currency: [8],
  SingleSelect: [9],
  MultipleSelect: [10],
  Dropdown: [11],
  Attachment: [14],
  Date: [15],
  DateTime: [16],
  DateRange: [17, 18],
  Region: [19, 23, 24],
  DynamicLink: [21],
  Divider: [22],
  AmountInWords: [25],
  Collaborator: [26],
  Department: [27],
  Rating: [28],
  Relation: [29],
  Lookup: [30],
  Formula: [31],
  Concatenate: [32],
  AutoNumber: [33],
  SubTable: [34],
  CascadingSelect: [35],
  Checkbox: [36],
  Rollup: [37],
  DateFormula: [38],
  CodeScan: [39],
  Location: [40],
  RichText: [41, 10010],
  Signature: [42],
  OCR: [43],
  Role: [44],
  Embed: [45],
  Time: [46],
  Barcode: [47],
  OrgRole: [48],
  Button: [49],
  APIQuery: [50],
  QueryRecord: [51],
  Section: [52],
  FunctionFormula: [53],
  CustomField: [],
} as const;

export type FieldTypeName = keyof typeof CODES;

const BY_CODE = new Map<number, FieldTypeName>();
for (const [name, codes] of Object.entries(CODES) as Array<[FieldTypeName, readonly number[]]>) {
  for (const code of codes) BY_CODE.set(code, name);
}

/** A type given as a name, a code or a code string; undefined when it is none of them. */
export function fieldTypeName(type: string | number): FieldTypeName | undefined {
  if (typeof type === 'number') return BY_CODE.get(type);
  if (Object.hasOwn(CODES, type)) return type as FieldTypeName;
  return /^\d+$/.test(type) ? BY_CODE.get(Number(type)) : undefined;
}

/** The first wire code of a type (the one the seed spec's forms write). */
export function fieldTypeCode(name: FieldTypeName): number {
  const code = (CODES[name] as readonly number[])[0];
  if (code === undefined) throw new Error(`field type ${name} has no code`);
  return code;
}

/** Computed kinds: written by the platform, refused in writes (platform-shapes §7 [L]). */
const COMPUTED: ReadonlySet<FieldTypeName> = new Set([
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
  return COMPUTED.has(name);
}

/** Kinds whose values are option keys. */
export const OPTION_FIELD_TYPES: ReadonlySet<FieldTypeName> = new Set([
  'SingleSelect',
  'MultipleSelect',
  'Dropdown',
]);

/** Every wire operator name (platform-shapes §8 [C]). */
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

/** The fact sheet's operator table, one row per family (platform-shapes §8). */
const FAMILIES: ReadonlyArray<{ kinds: readonly FieldTypeName[]; operators: readonly FilterOperator[] }> = [
  {
    kinds: [
      'Text',
      'PhoneNumber',
      'LandlinePhone',
      'Email',
      'Certificate',
      'Concatenate',
      'AutoNumber',
      'AmountInWords',
    ],
    operators: [
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
    ],
  },
  {
    kinds: ['Number', 'Currency', 'Formula', 'Rollup', 'Rating', 'FunctionFormula'],
    operators: ['eq', 'ne', 'gt', 'ge', 'lt', 'le', 'between', 'notbetween', 'isempty', 'isnotempty'],
  },
  {
    kinds: ['SingleSelect', 'MultipleSelect', 'Dropdown', 'Collaborator', 'OrgRole', 'Relation'],
    operators: ['in', 'notin', 'eq', 'ne', 'concurrent', 'isempty', 'isnotempty'],
  },
  {
    kinds: ['Department', 'Region', 'CascadingSelect'],
    operators: [
      'in',
      'notin',
      'eq',
      'ne',
      'concurrent',
      'isempty',
      'isnotempty',
      'belongsto',
      'notbelongsto',
    ],
  },
  // Dates: the generator sends between/notbetween; the CLI guide reports more [U].
  {
    kinds: ['Date', 'DateTime', 'Time', 'DateRange', 'DateFormula'],
    operators: ['between', 'notbetween', 'isempty', 'isnotempty'],
  },
  {
    kinds: [
      'Attachment',
      'Checkbox',
      'Location',
      'RichText',
      'Signature',
      'SubTable',
      'DynamicLink',
      'Lookup',
      'CodeScan',
      'OCR',
      'Barcode',
      'Embed',
      'Role',
      'QueryRecord',
      'APIQuery',
    ],
    operators: ['isempty', 'isnotempty'],
  },
];

const OPERATORS = new Map<FieldTypeName, readonly FilterOperator[]>();
for (const family of FAMILIES) for (const kind of family.kinds) OPERATORS.set(kind, family.operators);

/** The operators a field kind takes; none for layout and action controls. */
export function operatorsFor(name: FieldTypeName): readonly FilterOperator[] {
  return OPERATORS.get(name) ?? [];
}

/** System ids usable in filters and sorts (platform-shapes §8 [C], FE widget.js), with their v3 names. */
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

/** Operators of the system ids: rowid also takes `in` (fetch rows by id [L]); dates also compare [U]. */
export function systemFieldOperators(field: SystemFilterField): readonly FilterOperator[] {
  switch (SYSTEM_FILTER_FIELDS[field].family) {
    case 'text':
      return ['eq', 'ne', 'in', 'notin'];
    case 'date':
      return ['between', 'notbetween', 'isempty', 'isnotempty', 'gt', 'ge', 'lt', 'le'];
    case 'member':
      return operatorsFor('Collaborator');
    case 'number':
      return operatorsFor('Number');
  }
}
