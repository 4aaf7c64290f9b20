/** The wire form of a worksheet structure (platform notes §4 "Structure of a field"). */
import { fieldTypeCode } from '../field-kinds.ts';
import type { FieldTypeName } from '../field-kinds.ts';
import type { WorksheetField, WorksheetStructure } from '../wire-types.ts';
import type { FieldRecord, WorksheetRecord } from '../state/records.ts';

export function typeOut(type: FieldTypeName, format: 'code' | 'name'): string {
  return format === 'name' ? type : String(fieldTypeCode(type));
}

export function fieldView(f: FieldRecord, format: 'code' | 'name'): WorksheetField {
  const out: WorksheetField = {
    id: f.id,
    name: f.name,
    alias: f.alias,
    type: typeOut(f.type, format),
    required: f.required,
    isUnique: f.isUnique,
    isTitle: f.isTitle,
    isReadOnly: f.isReadOnly,
    isHidden: f.isHidden,
    options: f.options.map((o) => ({ ...o })),
  };
  if (f.precision !== undefined) out.precision = f.precision;
  if (f.subType !== undefined) out.subType = f.subType;
  if (f.max !== undefined) out.max = f.max;
  if (f.dataSource !== undefined) out.dataSource = f.dataSource;
  if (f.relation !== undefined)
    out.relation = { showFields: [...f.relation.showFields], bidirectional: f.relation.bidirectional };
  return out;
}

/**
 * The structure as the platform sends it (platform-shapes §4 [C]): keyed `worksheetId`,
 * with `desc` and `remark`, and no `id`. The spec dialect keeps the seed spec's form.
 */
export function platformStructureView(ws: WorksheetRecord): Record<string, unknown> {
  return {
    worksheetId: ws.id,
    name: ws.name,
    alias: ws.alias,
    remark: ws.remark,
    desc: '',
    fields: ws.fields.map((f) => ({
      ...fieldView(f, 'name'),
      desc: '',
      remark: '',
      isHiddenOnCreate: false,
      // Required in the schema, "" when the field has no reverse relation [C].
      sourceField: f.sourceField,
    })),
    views: ws.views.map((v) => ({ id: v.id, name: v.name, type: String(v.type) })),
  };
}

export function structureView(
  ws: WorksheetRecord,
  format: 'code' | 'name',
): WorksheetStructure & { remark: string; sectionId: string } {
  return {
    id: ws.id,
    name: ws.name,
    alias: ws.alias,
    appId: ws.appId,
    remark: ws.remark,
    sectionId: ws.sectionId,
    fields: ws.fields.map((f) => fieldView(f, format)),
    views: ws.views.map((v) => ({ id: v.id, name: v.name, type: v.type })),
  };
}
