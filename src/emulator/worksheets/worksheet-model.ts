/**
 * Worksheets: create from a definition, find with the platform's codes (430022 no such
 * worksheet, 430013 a worksheet of another application), delete.
 */
import type { EmulatorDeps } from '../deps.ts';
import { EmulatorError, paramError } from '../emulator-error.ts';
import { asArray, asObject, asString, optionalString } from '../input.ts';
import { createRowTable } from '../rows/row-table.ts';
import type { AppRecord, FieldRecord, WorksheetRecord } from '../state/records.ts';
import { buildField, checkAlias, checkFieldSet } from './build-field.ts';

/** Field id and alias → field, rebuilt whenever the field list changes. */
export function indexFields(ws: WorksheetRecord): void {
  ws.byKey = new Map();
  for (const f of ws.fields) {
    ws.byKey.set(f.id, f);
    if (f.alias !== '') ws.byKey.set(f.alias, f);
  }
}

export function uniqueFieldIds(ws: WorksheetRecord): string[] {
  return ws.fields.filter((f) => f.isUnique).map((f) => f.id);
}

export function titleField(ws: WorksheetRecord): FieldRecord | undefined {
  return ws.fields.find((f) => f.isTitle) ?? ws.fields[0];
}

/** A worksheet of the app by id or alias. */
export function resolveWorksheetRef(deps: EmulatorDeps, app: AppRecord, ref: string): string | undefined {
  if (app.worksheetIds.includes(ref)) return ref;
  for (const id of app.worksheetIds) {
    const ws = deps.state.worksheets.get(id);
    if (ws !== undefined && ws.alias !== '' && ws.alias === ref) return id;
  }
  return undefined;
}

export function findWorksheet(deps: EmulatorDeps, app: AppRecord, ref: string): WorksheetRecord {
  const id = resolveWorksheetRef(deps, app, ref);
  const ws = id === undefined ? undefined : deps.state.worksheets.get(id);
  if (ws !== undefined) return ws;
  if (deps.state.worksheets.has(ref))
    throw new EmulatorError(430013, `application ${app.id} has no worksheet ${ref}`);
  throw new EmulatorError(430022, `worksheet ${ref} does not exist`);
}

/** `givenId` lets a seed fix the worksheet id. */
export function createWorksheet(
  deps: EmulatorDeps,
  app: AppRecord,
  raw: unknown,
  where = 'request body',
  givenId?: string,
): WorksheetRecord {
  const input = asObject(raw, where);
  const name = asString(input['name'], `${where}.name`);
  const alias = optionalString(input['alias'], `${where}.alias`);
  checkAlias(alias, where);
  if (alias !== '' && resolveWorksheetRef(deps, app, alias) !== undefined) {
    throw new EmulatorError(
      10006,
      `${where}.alias "${alias}" is already used by another worksheet of the application`,
    );
  }
  const sectionId = optionalString(input['sectionId'], `${where}.sectionId`);
  if (sectionId !== '' && !app.sections.some((s) => s.id === sectionId)) {
    throw paramError(`${where}.sectionId "${sectionId}" is not a section of the application`);
  }
  if (givenId !== undefined && deps.state.worksheets.has(givenId))
    throw new EmulatorError(10006, `worksheet ${givenId} already exists`);
  const id = givenId ?? deps.ids.objectId();
  const scope = {
    // A relation may point at the worksheet being created, by its alias.
    resolveWorksheet: (ref: string) =>
      ref === id || (alias !== '' && ref === alias) ? id : resolveWorksheetRef(deps, app, ref),
  };
  const defs = asArray(input['fields'], `${where}.fields`);
  if (defs.length === 0) throw paramError(`${where}.fields must hold at least one field`);
  const fields = defs.map((def, i) => buildField(deps, def, `${where}.fields[${i}]`, scope));
  checkFieldSet(fields, `${where}.fields`);
  const ws: WorksheetRecord = {
    id,
    appId: app.id,
    name,
    alias,
    remark: optionalString(input['remark'], `${where}.remark`),
    sectionId,
    fields,
    byKey: new Map(),
    views: [],
    charts: new Map(),
    table: createRowTable(),
    createdAt: deps.options.now(),
  };
  indexFields(ws);
  if (input['createDefaultView'] !== false)
    ws.views.push({ id: deps.ids.objectId(), name: 'All', type: 'table', config: {} });
  deps.state.worksheets.set(id, ws);
  app.worksheetIds.push(id);
  const section = app.sections.find((s) => s.id === sectionId) ?? app.sections[0];
  if (section !== undefined) {
    section.items.push({ id, name, type: 'worksheet' });
    ws.sectionId = section.id;
  }
  return ws;
}

export function deleteWorksheet(deps: EmulatorDeps, app: AppRecord, ws: WorksheetRecord): void {
  deps.state.worksheets.delete(ws.id);
  app.worksheetIds = app.worksheetIds.filter((id) => id !== ws.id);
  for (const section of app.sections) section.items = section.items.filter((item) => item.id !== ws.id);
}
