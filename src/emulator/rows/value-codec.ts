/**
 * Write formats of platform notes §4: each field value is checked against its field's
 * type and turned into the canonical form the store keeps. Canonical forms: strings for
 * text, dates and times; numbers for Number/Currency/Rating; booleans for Checkbox;
 * string arrays for option keys, account ids, department ids and related row ids;
 * `{name, url}` arrays for attachments; Location an object (its JSON text is taken too).
 * `undefined` means empty. A single member or relation field (Collaborator subType 0,
 * Relation subType 1) takes one id.
 *
 * Errors: a value of the wrong form or an unknown option key is 10002; more options than
 * allowed 100006; more attachments than allowed 100007. Every message names the field.
 */
import type { EmulatorDeps } from '../deps.ts';
import { EmulatorError, valueError } from '../emulator-error.ts';
import { describe } from '../input.ts';
import type { FieldRecord, OptionRecord } from '../state/records.ts';
import { canonicalDateTime } from './date-time-values.ts';
import { fieldLabel } from './field-label.ts';
import { liveRow } from './row-table.ts';

/** State of one write request: options that `type: "2"` values would create. */
export interface WriteScope {
  deps: EmulatorDeps;
  /** Field id → new options, added to the structure only when the whole request succeeds. */
  pendingOptions: Map<string, OptionRecord[]>;
}

export interface FieldInput {
  value: unknown;
  /** "0" replace / "1" append (attachments); "2" lets select fields create options. */
  type?: string | undefined;
}

function isEmpty(value: unknown): boolean {
  return (
    value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0)
  );
}

function toList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [value];
}

/** Ids from `["id"]`, `"id"` or `[{<prop>: "id"}]`. */
function idList(value: unknown, prop: string, field: FieldRecord, what: string): string[] {
  return toList(value).map((item) => {
    const id = typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[prop] : item;
    if (typeof id !== 'string' || id === '')
      throw valueError(`${fieldLabel(field)} expects an array of ${what}, got ${describe(item)}`);
    return id;
  });
}

function optionKeys(scope: WriteScope, field: FieldRecord, input: FieldInput): string[] {
  const createFromText = input.type === '2';
  const pending = scope.pendingOptions.get(field.id) ?? [];
  const keys: string[] = [];
  for (const item of toList(input.value)) {
    if (typeof item !== 'string' || item === '')
      throw valueError(`${fieldLabel(field)} expects an array of option keys, got ${describe(item)}`);
    const all = [...field.options, ...pending];
    let option = all.find((o) => o.key === item && !o.isDeleted);
    if (option === undefined && createFromText) option = all.find((o) => o.value === item && !o.isDeleted);
    if (option === undefined && createFromText) {
      const live = field.options.filter((o) => !o.isDeleted).length + pending.length;
      if (live >= scope.deps.options.maxOptionsPerField) {
        throw new EmulatorError(
          100006,
          `${fieldLabel(field)}: cannot add option "${item}", the field already has ${live} options (limit ${scope.deps.options.maxOptionsPerField})`,
        );
      }
      option = {
        key: scope.deps.ids.uuid(),
        value: item,
        index: field.options.length + pending.length + 1,
        isDeleted: false,
      };
      pending.push(option);
      scope.pendingOptions.set(field.id, pending);
    }
    if (option === undefined) {
      throw valueError(
        `${fieldLabel(field)}: ${describe(item)} is not an option key of the field; send option keys from the structure, or field-value type "2" to write option text`,
      );
    }
    if (!keys.includes(option.key)) keys.push(option.key);
  }
  if (keys.length > 1 && field.type !== 'MultipleSelect') {
    throw valueError(`${fieldLabel(field)} is single-select: send one option key, got ${keys.length}`);
  }
  return keys;
}

function attachments(
  scope: WriteScope,
  field: FieldRecord,
  input: FieldInput,
  previous: unknown,
): Array<{ name: string; url: string }> {
  const added = toList(input.value).map((item) => {
    const obj = typeof item === 'object' && item !== null ? (item as Record<string, unknown>) : undefined;
    const url = obj?.['url'];
    if (typeof url !== 'string' || url === '')
      throw valueError(`${fieldLabel(field)} expects an array of {name, url}, got ${describe(item)}`);
    const name = typeof obj?.['name'] === 'string' ? obj['name'] : (url.split('/').pop() ?? url);
    return { name, url };
  });
  const base =
    input.type === '1' && Array.isArray(previous) ? (previous as Array<{ name: string; url: string }>) : [];
  const all = [...base, ...added];
  if (all.length > scope.deps.options.maxAttachmentsPerField) {
    throw new EmulatorError(
      100007,
      `${fieldLabel(field)}: ${all.length} attachments exceed the limit of ${scope.deps.options.maxAttachmentsPerField}`,
    );
  }
  return all;
}

function requireExisting(
  ids: string[],
  exists: (id: string) => boolean,
  field: FieldRecord,
  what: string,
): string[] {
  const missing = ids.find((id) => !exists(id));
  if (missing !== undefined) throw valueError(`${fieldLabel(field)}: ${what} "${missing}" does not exist`);
  return [...new Set(ids)];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * A single member or relation field (Collaborator subType 0, Relation subType 1) holds
 * one id; the platform refuses more with a parameter value error (10002).
 */
function single(field: FieldRecord, isSingle: boolean, ids: string[]): string[] {
  if (isSingle && ids.length > 1)
    throw valueError(
      `${fieldLabel(field)} holds one ${field.type === 'Relation' ? 'row' : 'member'} (subType ${field.subType}), got ${ids.length}: ${ids.join(', ')}`,
    );
  return ids;
}

/** The canonical form of a written value, or undefined to clear the field. */
export function canonicalValue(
  scope: WriteScope,
  field: FieldRecord,
  input: FieldInput,
  previous: unknown,
): unknown {
  if (field.isReadOnly) throw valueError(`${fieldLabel(field)} is read-only and cannot be written`);
  const value = input.value;
  if (isEmpty(value)) return field.type === 'Attachment' && input.type === '1' ? previous : undefined;
  const state = scope.deps.state;
  switch (field.type) {
    case 'Text':
    case 'PhoneNumber':
    case 'LandlinePhone':
    case 'Email':
    case 'Certificate':
    case 'RichText':
    case 'Signature':
    case 'DynamicLink':
      if (typeof value === 'string') return value;
      if (typeof value === 'number' && Number.isFinite(value)) return String(value);
      throw valueError(`${fieldLabel(field)} expects a string, got ${describe(value)}`);
    case 'Number':
    case 'Currency':
    case 'Rating': {
      const n =
        typeof value === 'string' && /^\s*-?\d+(\.\d+)?([eE][+-]?\d+)?\s*$/.test(value)
          ? Number(value)
          : value;
      if (typeof n === 'number' && Number.isFinite(n)) return n;
      throw valueError(`${fieldLabel(field)} expects a number, got ${describe(value)}`);
    }
    case 'Checkbox':
      if (value === true || value === 1 || value === '1' || value === 'true') return true;
      if (value === false || value === 0 || value === '0' || value === 'false') return undefined;
      throw valueError(`${fieldLabel(field)} expects true/false or 1/0, got ${describe(value)}`);
    case 'SingleSelect':
    case 'Dropdown':
    case 'MultipleSelect':
      return optionKeys(scope, field, input);
    case 'Collaborator':
      return single(
        field,
        field.subType === 0,
        requireExisting(
          idList(value, 'accountId', field, 'account ids'),
          (id) => state.users.has(id),
          field,
          'member',
        ),
      );
    case 'Department':
      return requireExisting(
        idList(value, 'departmentId', field, 'department ids'),
        (id) => state.departments.has(id),
        field,
        'department',
      );
    case 'OrgRole':
    case 'CascadingSelect':
      return idList(value, 'id', field, 'ids');
    case 'Region': {
      const code =
        typeof value === 'object' && value !== null && !Array.isArray(value)
          ? (value as Record<string, unknown>)['code']
          : value;
      if (typeof code !== 'string' || !state.regions.has(code))
        throw valueError(
          `${fieldLabel(field)} expects a region code from /v3/regions/lookup, got ${describe(value)}`,
        );
      return code;
    }
    case 'Relation': {
      const target = field.dataSource === undefined ? undefined : state.worksheets.get(field.dataSource);
      if (target === undefined)
        throw valueError(`${fieldLabel(field)}: its related worksheet no longer exists`);
      return single(
        field,
        field.subType === 1,
        requireExisting(
          idList(value, 'sid', field, 'row ids'),
          (id) => liveRow(target.table, id) !== undefined,
          field,
          `row of worksheet ${target.name}`,
        ),
      );
    }
    case 'Attachment':
      return attachments(scope, field, input, previous);
    case 'Date':
    case 'DateTime':
    case 'Time':
    case 'DateRange':
      return canonicalDateTime(field, field.type, value);
    case 'Location': {
      // The CLI seed guide writes the JSON text of the object (platform-shapes §7 [U]); both are taken.
      const location = typeof value === 'string' ? parseJson(value) : value;
      if (typeof location === 'object' && location !== null && !Array.isArray(location))
        return { ...(location as Record<string, unknown>) };
      throw valueError(
        `${fieldLabel(field)} expects an object {x, y, title, address} or its JSON text, got ${describe(value)}`,
      );
    }
    case 'SubTable':
      if (Array.isArray(value)) return value;
      throw valueError(`${fieldLabel(field)} expects an array, got ${describe(value)}`);
    default:
      throw valueError(`${fieldLabel(field)} is read-only and cannot be written`);
  }
}
