/**
 * The `fields` array of a write (`[{id: <field id or alias>, value, type?}]`, platform
 * notes §2), checked against the worksheet and turned into a row's new values with the
 * platform's rules: required fields (430019), unique fields (100005), value forms (10002).
 */
import { EmulatorError, paramError } from '../emulator-error.ts';
import { asArray, asObject, asString } from '../input.ts';
import type { FieldRecord, StoredRow, WorksheetRecord } from '../state/records.ts';
import { uniqueHolder, uniqueKey } from './row-table.ts';
import { fieldLabel } from './field-label.ts';
import { canonicalValue } from './value-codec.ts';
import type { FieldInput, WriteScope } from './value-codec.ts';

export interface ParsedFieldValue {
  field: FieldRecord;
  input: FieldInput;
}

/** New values of a row and what changed. */
export interface PreparedValues {
  values: Record<string, unknown>;
  changes: Array<{ fieldId: string; before: unknown; after: unknown }>;
}

/** Prefixes an error with where it happened (`rows[3]: `), keeping its code. */
export function located<T>(where: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof EmulatorError && where !== '')
      throw new EmulatorError(error.errorCode, `${where}: ${error.message}`);
    throw error;
  }
}

export function parseFieldValues(ws: WorksheetRecord, raw: unknown, where: string): ParsedFieldValue[] {
  const seen = new Set<string>();
  return asArray(raw, where).map((item, i) => {
    const at = `${where}[${i}]`;
    const obj = asObject(item, at);
    const id = asString(obj['id'], `${at}.id`);
    const field = ws.byKey.get(id);
    if (field === undefined)
      throw paramError(
        `${at}.id "${id}" is not a field of worksheet "${ws.name}" (give a field id or alias)`,
      );
    if (seen.has(field.id)) throw paramError(`${at}: field "${id}" is written twice`);
    seen.add(field.id);
    const type = obj['type'];
    const input: FieldInput = { value: obj['value'] };
    if (typeof type === 'string' || typeof type === 'number') input.type = String(type);
    return { field, input };
  });
}

function isEmpty(value: unknown): boolean {
  return value === undefined || (Array.isArray(value) && value.length === 0);
}

function same(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Applies parsed field values to a row's values (a new object; the old one is not
 * touched). `previous` is undefined for a create: then every required field is checked;
 * for an update only the fields written are. `batchKeys` catches duplicates between the
 * rows of one batch create.
 */
export function prepareValues(
  scope: WriteScope,
  ws: WorksheetRecord,
  parsed: readonly ParsedFieldValue[],
  previous: StoredRow | undefined,
  batchKeys?: Map<string, Set<string>>,
): PreparedValues {
  const values: Record<string, unknown> = previous === undefined ? {} : { ...previous.values };
  const changes: PreparedValues['changes'] = [];
  for (const { field, input } of parsed) {
    const before = values[field.id];
    const after = canonicalValue(scope, field, input, before);
    if (after === undefined) delete values[field.id];
    else values[field.id] = after;
    if (!same(before, after)) changes.push({ fieldId: field.id, before, after });
  }
  const checked = previous === undefined ? ws.fields : parsed.map((p) => p.field);
  for (const field of checked) {
    if (field.required && !field.isReadOnly && isEmpty(values[field.id])) {
      throw new EmulatorError(430019, `${fieldLabel(field)} is required and has no value`);
    }
    if (!field.isUnique) continue;
    const key = uniqueKey(values[field.id]);
    if (key === undefined) continue;
    const holder = uniqueHolder(ws.table, field.id, key);
    if (holder !== undefined && holder !== previous?.id) {
      throw new EmulatorError(
        100005,
        `${fieldLabel(field)} is unique and value ${JSON.stringify(key)} is already used by row ${holder}`,
      );
    }
    if (batchKeys !== undefined) {
      const keys = batchKeys.get(field.id) ?? new Set<string>();
      if (keys.has(key))
        throw new EmulatorError(
          100005,
          `${fieldLabel(field)} is unique and value ${JSON.stringify(key)} appears twice in the batch`,
        );
      keys.add(key);
      batchKeys.set(field.id, keys);
    }
  }
  return { values, changes };
}

/** Checks a field set on its own (batch update): value forms and required fields. */
export function checkValues(scope: WriteScope, parsed: readonly ParsedFieldValue[]): void {
  for (const { field, input } of parsed) {
    const after = canonicalValue(scope, field, input, undefined);
    if (field.required && isEmpty(after) && input.type !== '1') {
      throw new EmulatorError(430019, `${fieldLabel(field)} is required and has no value`);
    }
  }
}

/** Adds the options that `type: "2"` values created, once the request has succeeded. */
export function commitPendingOptions(scope: WriteScope, ws: WorksheetRecord): void {
  for (const [fieldId, options] of scope.pendingOptions) {
    const field = ws.byKey.get(fieldId);
    if (field !== undefined) field.options = [...field.options, ...options];
  }
  scope.pendingOptions.clear();
}
