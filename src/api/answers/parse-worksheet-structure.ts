/**
 * `GET /v3/app/worksheets/{worksheet_id}` → {@link WorksheetStructure}
 * (platform-shapes §4, `worksheet-get.json`). The structure's id key is `worksheetId`
 * on the public platform [C] and `id` in the seed spec; field types come as names,
 * integer codes (the export's example, V2) or code strings; option flags as booleans,
 * integers or strings. Keys rowbridge does not use (`attribute`, `size`, `_createdAt`)
 * are dropped.
 */
import { fieldTypeName } from '../field-types.ts';
import type {
  FieldOption,
  FieldRelation,
  WorksheetField,
  WorksheetStructure,
  WorksheetView,
} from '../types.ts';
import { AnswerShapeError, describeKeys } from './answer-shape-error.ts';
import type { AnswerRef } from './answer-shape-error.ts';
import { asRecord, firstId, readId, readLooseBoolean, readLooseInteger } from './read-loose.ts';

/** Keys that hold a structure's id, in order of preference. */
export const STRUCTURE_ID_KEYS = ['worksheetId', 'id'] as const;

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Sets `target[key]` only when `value` is defined (exactOptionalPropertyTypes). */
function set<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value;
}

/** A type name from a name, an integer code or a code string; unknown names stay as sent. */
export function readFieldType(value: unknown): string | undefined {
  if (typeof value === 'number') return fieldTypeName(value);
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  return fieldTypeName(value) ?? value;
}

function readOption(raw: unknown): FieldOption | undefined {
  const option = asRecord(raw);
  const key = option === undefined ? undefined : readId(option.key);
  if (option === undefined || key === undefined) return undefined;
  const value = typeof option.value === 'number' ? String(option.value) : (text(option.value) ?? '');
  const result: FieldOption = { key, value };
  set(result, 'index', readLooseInteger(option.index));
  set(result, 'isDeleted', readLooseBoolean(option.isDeleted));
  set(result, 'color', text(option.color));
  return result;
}

function readRelation(raw: unknown): FieldRelation | undefined {
  const relation = asRecord(raw);
  if (relation === undefined) return undefined;
  const showFields = Array.isArray(relation.showFields)
    ? relation.showFields.filter((f): f is string => typeof f === 'string')
    : [];
  const result: FieldRelation = { showFields };
  set(result, 'bidirectional', readLooseBoolean(relation.bidirectional));
  return result;
}

function readField(ref: AnswerRef, raw: unknown, at: number): WorksheetField {
  const field = asRecord(raw);
  if (field === undefined) throw new AnswerShapeError(ref, `fields[${at}] is not an object`);
  const id = readId(field.id);
  if (id === undefined) {
    throw new AnswerShapeError(ref, `fields[${at}] has no "id" (a 24-hex field id); ${describeKeys(field)}`);
  }
  const type = readFieldType(field.type);
  if (type === undefined) {
    throw new AnswerShapeError(
      ref,
      `field ${id} has no usable "type" (a type name or a numeric code), got ${JSON.stringify(field.type) ?? 'nothing'}`,
    );
  }
  const result: WorksheetField = { id, name: text(field.name) ?? '', type };
  set(result, 'alias', text(field.alias));
  for (const flag of ['required', 'isUnique', 'isTitle', 'isReadOnly', 'isHidden'] as const) {
    set(result, flag, readLooseBoolean(field[flag]));
  }
  if (Array.isArray(field.options)) {
    result.options = field.options.map(readOption).filter((o): o is FieldOption => o !== undefined);
  }
  set(result, 'subType', readLooseInteger(field.subType));
  set(result, 'precision', readLooseInteger(field.precision));
  set(result, 'max', readLooseInteger(field.max));
  set(result, 'dataSource', readId(field.dataSource));
  set(result, 'sourceField', text(field.sourceField));
  set(result, 'relation', readRelation(field.relation));
  set(result, 'desc', text(field.desc));
  set(result, 'remark', text(field.remark));
  return result;
}

function readView(raw: unknown): WorksheetView | undefined {
  const view = asRecord(raw);
  const id = view === undefined ? undefined : readId(view.id);
  if (view === undefined || id === undefined) return undefined;
  const result: WorksheetView = { id, name: text(view.name) ?? '' };
  const type = typeof view.type === 'number' ? String(view.type) : text(view.type);
  set(result, 'type', type);
  return result;
}

/**
 * Reads a structure answer's `data`. Throws {@link AnswerShapeError} naming the keys
 * present when there is no id under `worksheetId` or `id`, no `fields` array, or a
 * field without an id or a type.
 */
export function parseWorksheetStructure(data: unknown, ref: AnswerRef): WorksheetStructure {
  const record = asRecord(data);
  if (record === undefined) {
    throw new AnswerShapeError(ref, `expected a worksheet structure object, ${describeKeys(data)}`);
  }
  const found = firstId(record, STRUCTURE_ID_KEYS);
  if (found === undefined) {
    throw new AnswerShapeError(
      ref,
      `the structure has no worksheet id: expected a non-empty string under "worksheetId" or "id"; ${describeKeys(record)}`,
    );
  }
  if (!Array.isArray(record.fields)) {
    throw new AnswerShapeError(
      ref,
      `worksheet ${found.id}: "fields" is not an array; ${describeKeys(record)}`,
    );
  }
  const structure: WorksheetStructure = {
    id: found.id,
    name: text(record.name) ?? '',
    fields: record.fields.map((field, at) => readField(ref, field, at)),
  };
  set(structure, 'alias', text(record.alias));
  set(structure, 'appId', readId(record.appId));
  set(structure, 'desc', text(record.desc));
  set(structure, 'remark', text(record.remark));
  if (Array.isArray(record.views)) {
    structure.views = record.views.map(readView).filter((v): v is WorksheetView => v !== undefined);
  }
  return structure;
}
