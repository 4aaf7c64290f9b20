/**
 * Field definitions (spec §2 "Field definition", platform notes §4) turned into field
 * records, with the checks the platform makes when a worksheet is created or changed.
 */
import {
  OPTION_FIELD_TYPES,
  fieldTypeName,
  isReadOnlyFieldType,
  SYSTEM_FILTER_FIELDS,
} from '../field-kinds.ts';
import type { EmulatorDeps } from '../deps.ts';
import { EmulatorError, paramError } from '../emulator-error.ts';
import {
  asArray,
  asObject,
  asString,
  describe,
  optionalArray,
  optionalBoolean,
  optionalInteger,
  optionalString,
} from '../input.ts';
import type { FieldTypeName } from '../field-kinds.ts';
import type { FieldRecord, OptionRecord } from '../state/records.ts';

/** Aliases a field may not take: the row id keys of the flat shape and the system filter names. */
const RESERVED_ALIASES: ReadonlySet<string> = new Set(['id', 'rowid', ...Object.keys(SYSTEM_FILTER_FIELDS)]);
const ALIAS_PATTERN = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Where a relation's target worksheet is looked up: the app's worksheets, or the one being built. */
export interface FieldScope {
  resolveWorksheet(ref: string): string | undefined;
}

export function checkAlias(alias: string, where: string): void {
  if (alias === '') return;
  if (!ALIAS_PATTERN.test(alias)) {
    throw paramError(
      `${where}.alias ${describe(alias)} must start with a letter and hold only letters, digits and _`,
    );
  }
  if (RESERVED_ALIASES.has(alias.toLowerCase())) {
    throw paramError(
      `${where}.alias "${alias}" is reserved (system field names: ${[...RESERVED_ALIASES].join(', ')})`,
    );
  }
}

/**
 * Options of a select field or an option set. Options that carry a known key keep it
 * (an edit), others get a new UUID key; values must be unique among live options.
 */
export function buildOptions(
  deps: EmulatorDeps,
  raw: unknown,
  where: string,
  existing: readonly OptionRecord[] = [],
): OptionRecord[] {
  const known = new Map(existing.map((o) => [o.key, o]));
  const seen = new Set<string>();
  const result: OptionRecord[] = [];
  asArray(raw, where).forEach((item, i) => {
    const at = `${where}[${i}]`;
    const obj = typeof item === 'string' ? { value: item } : asObject(item, at);
    const value = asString(obj['value'], `${at}.value`);
    const key = optionalString(obj['key'], `${at}.key`);
    const isDeleted = optionalBoolean(obj['isDeleted'], `${at}.isDeleted`, false);
    if (!isDeleted) {
      if (seen.has(value))
        throw paramError(`${at}.value "${value}" appears twice; option values must be unique`);
      seen.add(value);
    }
    if (key !== '' && existing.length > 0 && !known.has(key)) {
      throw paramError(
        `${at}.key "${key}" is not an option of this field; leave the key out to add an option`,
      );
    }
    if (key !== '' && result.some((o) => o.key === key)) throw paramError(`${at}.key "${key}" appears twice`);
    const option: OptionRecord = {
      key: key === '' ? deps.ids.uuid() : key,
      value,
      index: optionalInteger(obj['index'], `${at}.index`) ?? i + 1,
      isDeleted,
    };
    const color = optionalString(obj['color'], `${at}.color`);
    if (color !== '') option.color = color;
    result.push(option);
  });
  // Options left out of an edit are kept as deleted: rows may still hold their keys.
  for (const old of existing) {
    if (!result.some((o) => o.key === old.key)) result.push({ ...old, isDeleted: true });
  }
  const live = result.filter((o) => !o.isDeleted).length;
  if (live > deps.options.maxOptionsPerField) {
    throw new EmulatorError(
      100006,
      `${where}: ${live} options exceed the limit of ${deps.options.maxOptionsPerField} per field`,
    );
  }
  return result;
}

/** subTypes a kind allows, and the one it gets when none is given. */
const SUB_TYPES: Partial<Record<FieldTypeName, { allowed: readonly number[]; fallback: number }>> = {
  // No source states the defaults [U]: "multiple" keeps writes of several members or rows working.
  Collaborator: { allowed: [0, 1], fallback: 1 },
  Relation: { allowed: [1, 2], fallback: 2 },
  Time: { allowed: [1, 6], fallback: 6 },
  Date: { allowed: [1, 2, 3, 4, 5, 6], fallback: 3 },
  DateTime: { allowed: [1, 2, 3, 4, 5, 6], fallback: 6 },
};

export function subTypeOf(type: FieldTypeName, raw: unknown, where: string): number | undefined {
  const given = optionalInteger(raw, where);
  const rule = SUB_TYPES[type];
  if (rule === undefined) return given;
  if (given === undefined) return rule.fallback;
  if (!rule.allowed.includes(given))
    throw paramError(`${where} ${given} is not a ${type} subType; allowed: ${rule.allowed.join(', ')}`);
  return given;
}

function ratingMax(raw: unknown, where: string): number {
  const max = optionalInteger(raw, where) ?? 5;
  if (max < 0 || max > 10) throw paramError(`${where} must be 0 to 10, got ${max}`);
  return max;
}

function relationOf(raw: unknown, where: string): { showFields: string[]; bidirectional: boolean } {
  if (raw === undefined || raw === null) return { showFields: [], bidirectional: false };
  const obj = asObject(raw, where);
  return {
    showFields: optionalArray(obj['showFields'], `${where}.showFields`).map((f, i) =>
      asString(f, `${where}.showFields[${i}]`),
    ),
    bidirectional: optionalBoolean(obj['bidirectional'], `${where}.bidirectional`, false),
  };
}

export function buildField(deps: EmulatorDeps, raw: unknown, where: string, scope: FieldScope): FieldRecord {
  const def = asObject(raw, where);
  const name = asString(def['name'], `${where}.name`);
  const rawType = def['type'];
  const type =
    typeof rawType === 'string' || typeof rawType === 'number' ? fieldTypeName(rawType) : undefined;
  if (type === undefined) {
    throw paramError(
      `${where}.type ${describe(rawType)} is not a field type; use a code such as "2" (Text) or a name such as "Text"`,
    );
  }
  const alias = optionalString(def['alias'], `${where}.alias`);
  checkAlias(alias, where);
  const field: FieldRecord = {
    id: deps.ids.objectId(),
    name,
    alias,
    type,
    required: optionalBoolean(def['required'], `${where}.required`, false),
    isUnique: optionalBoolean(def['isUnique'], `${where}.isUnique`, false),
    isTitle: optionalBoolean(def['isTitle'], `${where}.isTitle`, false),
    isReadOnly: optionalBoolean(def['isReadOnly'], `${where}.isReadOnly`, false) || isReadOnlyFieldType(type),
    isHidden: optionalBoolean(def['isHidden'], `${where}.isHidden`, false),
    options: [],
    dataSource: undefined,
    precision: optionalInteger(def['precision'], `${where}.precision`),
    subType: subTypeOf(type, def['subType'], `${where}.subType`),
    max: type === 'Rating' ? ratingMax(def['max'], `${where}.max`) : undefined,
    sourceField: optionalString(def['sourceField'], `${where}.sourceField`),
    relation: type === 'Relation' ? relationOf(def['relation'], `${where}.relation`) : undefined,
    config: def['config'] === undefined ? {} : { ...asObject(def['config'], `${where}.config`) },
  };
  if (OPTION_FIELD_TYPES.has(type)) {
    field.options =
      def['options'] === undefined ? [] : buildOptions(deps, def['options'], `${where}.options`);
  }
  if (type === 'Relation' || (type === 'SubTable' && def['dataSource'] !== undefined)) {
    const ref = asString(def['dataSource'], `${where}.dataSource`);
    const target = scope.resolveWorksheet(ref);
    if (target === undefined) {
      throw paramError(
        `${where}.dataSource "${ref}" is not a worksheet of this application (give its id or alias)`,
      );
    }
    field.dataSource = target;
  }
  return field;
}

/** Checks a worksheet's field list as a whole: unique aliases, one title field. */
export function checkFieldSet(fields: FieldRecord[], where: string): void {
  const aliases = new Set<string>();
  for (const f of fields) {
    if (f.alias === '') continue;
    if (aliases.has(f.alias)) throw paramError(`${where}: alias "${f.alias}" is used by two fields`);
    aliases.add(f.alias);
  }
  const titles = fields.filter((f) => f.isTitle);
  if (titles.length > 1)
    throw paramError(
      `${where}: only one field may be the title (isTitle), got ${titles.map((f) => f.name).join(', ')}`,
    );
  if (titles.length === 0) {
    // The platform always has a title field; the first text field takes the role.
    const first = fields.find((f) => f.type === 'Text') ?? fields[0];
    if (first !== undefined) first.isTitle = true;
  }
}
