/**
 * POST /v3/app/worksheets/{id}/structure. The spec shows no payload; the emulator takes
 * `{name?, alias?, remark?, addFields?: FieldDefinition[], editFields?: [{id, ...changes}],
 * removeFields?: [id or alias]}` and answers the new structure. The change is checked as
 * a whole before anything is applied.
 */
import type { EmulatorDeps } from '../deps.ts';
import { EmulatorError, paramError } from '../emulator-error.ts';
import {
  asObject,
  asString,
  bodyObject,
  optionalArray,
  optionalBoolean,
  optionalInteger,
  optionalString,
} from '../input.ts';
import { rebuildUniqueIndex } from '../rows/row-table.ts';
import type { AppRecord, FieldRecord, WorksheetRecord } from '../state/records.ts';
import { fieldTypeName, isReadOnlyFieldType, OPTION_FIELD_TYPES } from '../field-kinds.ts';
import { buildField, buildOptions, checkAlias, checkFieldSet, subTypeOf } from './build-field.ts';
import { indexFields, resolveWorksheetRef } from './worksheet-model.ts';

function editField(deps: EmulatorDeps, field: FieldRecord, raw: unknown, where: string): FieldRecord {
  const edit = asObject(raw, where);
  const next: FieldRecord = { ...field, options: field.options, config: { ...field.config } };
  if (edit['type'] !== undefined) {
    const type =
      typeof edit['type'] === 'string' || typeof edit['type'] === 'number'
        ? fieldTypeName(edit['type'])
        : undefined;
    if (type !== field.type)
      throw paramError(`${where}.type: the type of field "${field.name}" cannot be changed`);
  }
  if (edit['name'] !== undefined) next.name = asString(edit['name'], `${where}.name`);
  if (edit['alias'] !== undefined) {
    next.alias = optionalString(edit['alias'], `${where}.alias`);
    checkAlias(next.alias, where);
  }
  next.required = optionalBoolean(edit['required'], `${where}.required`, field.required);
  next.isUnique = optionalBoolean(edit['isUnique'], `${where}.isUnique`, field.isUnique);
  next.isTitle = optionalBoolean(edit['isTitle'], `${where}.isTitle`, field.isTitle);
  next.isHidden = optionalBoolean(edit['isHidden'], `${where}.isHidden`, field.isHidden);
  next.isReadOnly =
    optionalBoolean(edit['isReadOnly'], `${where}.isReadOnly`, field.isReadOnly) ||
    isReadOnlyFieldType(field.type);
  next.precision = optionalInteger(edit['precision'], `${where}.precision`) ?? field.precision;
  if (edit['subType'] !== undefined)
    next.subType = subTypeOf(field.type, edit['subType'], `${where}.subType`);
  if (edit['config'] !== undefined) next.config = { ...asObject(edit['config'], `${where}.config`) };
  if (edit['options'] !== undefined) {
    if (!OPTION_FIELD_TYPES.has(field.type))
      throw paramError(`${where}.options: field "${field.name}" (${field.type}) has no options`);
    next.options = buildOptions(deps, edit['options'], `${where}.options`, field.options);
  }
  return next;
}

export function updateStructure(
  deps: EmulatorDeps,
  app: AppRecord,
  ws: WorksheetRecord,
  rawBody: unknown,
): void {
  const body = bodyObject(rawBody);
  let fields = [...ws.fields];
  const find = (ref: string, where: string): number => {
    const i = fields.findIndex((f) => f.id === ref || (f.alias !== '' && f.alias === ref));
    if (i < 0) throw paramError(`${where}: worksheet "${ws.name}" has no field "${ref}"`);
    return i;
  };

  optionalArray(body['removeFields'], 'removeFields').forEach((ref, i) => {
    fields.splice(find(asString(ref, `removeFields[${i}]`), `removeFields[${i}]`), 1);
  });
  optionalArray(body['editFields'], 'editFields').forEach((raw, i) => {
    const where = `editFields[${i}]`;
    const index = find(asString(asObject(raw, where)['id'], `${where}.id`), where);
    const edited = editField(deps, fields[index]!, raw, where);
    // A newly set title takes the role from the old one.
    if (edited.isTitle && !fields[index]!.isTitle)
      fields = fields.map((f) => (f.isTitle ? { ...f, isTitle: false } : f));
    fields[index] = edited;
  });
  const scope = { resolveWorksheet: (ref: string) => resolveWorksheetRef(deps, app, ref) };
  optionalArray(body['addFields'], 'addFields').forEach((raw, i) => {
    fields.push(buildField(deps, raw, `addFields[${i}]`, scope));
  });
  if (fields.length === 0) throw paramError('the worksheet would have no fields left; keep at least one');
  checkFieldSet(fields, 'structure');

  for (const field of fields) {
    const before = ws.fields.find((f) => f.id === field.id);
    if (field.isUnique && before?.isUnique !== true) {
      const duplicate = rebuildUniqueIndex(ws.table, field.id);
      if (duplicate !== undefined) {
        throw new EmulatorError(
          100005,
          `field "${field.name}" cannot become unique: value ${duplicate} is held by several rows`,
        );
      }
    }
  }
  const kept = new Set(fields.map((f) => f.id));
  for (const f of ws.fields)
    if (!kept.has(f.id) || !fields.find((n) => n.id === f.id)?.isUnique) ws.table.unique.delete(f.id);

  if (body['name'] !== undefined) ws.name = asString(body['name'], 'name');
  if (body['remark'] !== undefined) ws.remark = optionalString(body['remark'], 'remark');
  if (body['alias'] !== undefined) {
    const alias = optionalString(body['alias'], 'alias');
    checkAlias(alias, 'request body');
    const holder = alias === '' ? undefined : resolveWorksheetRef(deps, app, alias);
    if (holder !== undefined && holder !== ws.id)
      throw new EmulatorError(10006, `alias "${alias}" is already used by another worksheet`);
    ws.alias = alias;
  }
  ws.fields = fields;
  indexFields(ws);
}
