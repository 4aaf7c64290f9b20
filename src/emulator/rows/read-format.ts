/**
 * Read forms of field values and the two row shapes.
 *
 * Values (both dialects): numbers as strings ("9.99", platform notes §4 [C]); Checkbox
 * "1"/"0"; options `[{key, value}]`; departments `[{departmentId, departmentName}]`;
 * relations `[{sid, name}]` (name = the related row's title); Location `{x, y, address,
 * title}`; dates as written, Time `HH:mm` for subType 1; other computed fields "" (the
 * emulator does not evaluate formulas). Empty scalars read "", empty lists [].
 * The platform dialect (the default, platform-shapes §6) then serves members `{accountId,
 * fullname, avatar, status}`, attachments `{file_id, file_name, file_size, downloadUrl}`,
 * a region `{code, name}`, AutoNumber zero-padded ("0007") and a SubTable's child count;
 * the spec dialect members `{accountId, fullname}`, attachments `{name, url}`, the region
 * code and the AutoNumber ordinal.
 *
 * Shapes: `fields` is the spec's `{id, fields: [{id, alias, value, type, controlName}],
 * _createdBy, ...}`; `flat` is `{id, <alias or field id>: value, _createdAt, ...}` (the
 * spec dialect adds `rowid`).
 */
import { createHash } from 'node:crypto';
import type { EmulatorState, FieldRecord, StoredRow, WorksheetRecord } from '../state/records.ts';
import { typeOut } from '../worksheets/structure-view.ts';

export interface RenderOptions {
  shape: 'fields' | 'flat';
  /** `platform`: rows carry `id` only, timestamps are zone-less wall clocks of `timeZone`. @defaultValue 'spec' */
  dialect?: 'platform' | 'spec';
  timeZone?: string;
  typeFormat: 'code' | 'name';
  useFieldIdAsKey: boolean;
  includeSystemFields: boolean;
  /** Projection; every field when undefined. */
  fields: readonly FieldRecord[] | undefined;
}

function list(value: unknown): string[] {
  return Array.isArray(value) ? (value as string[]) : [];
}

/** A row's title as plain text (relation names, pivot labels). */
export function titleText(state: EmulatorState, ws: WorksheetRecord, row: StoredRow): string {
  const title = ws.fields.find((f) => f.isTitle) ?? ws.fields[0];
  return title === undefined ? '' : plainText(state, title, row);
}

/** A value as text: option texts, member names, numbers; for search and labels. */
export function plainText(state: EmulatorState, field: FieldRecord, row: StoredRow): string {
  const value = readValue(state, field, row);
  if (Array.isArray(value)) {
    return value
      .map((v: unknown) => {
        if (typeof v !== 'object' || v === null) return String(v);
        const o = v as Record<string, unknown>;
        const text = o['value'] ?? o['fullname'] ?? o['departmentName'] ?? o['name'];
        return typeof text === 'string' ? text : '';
      })
      .join(', ');
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function readValue(state: EmulatorState, field: FieldRecord, row: StoredRow): unknown {
  const value = row.values[field.id];
  switch (field.type) {
    case 'Number':
    case 'Currency':
    case 'Rating':
      if (typeof value !== 'number') return '';
      return field.precision === undefined ? String(value) : value.toFixed(field.precision);
    case 'Checkbox':
      return value === true ? '1' : '0';
    case 'SingleSelect':
    case 'Dropdown':
    case 'MultipleSelect':
      return list(value).map((key) => ({
        key,
        value: field.options.find((o) => o.key === key)?.value ?? '',
      }));
    case 'Collaborator':
      return list(value).map((accountId) => ({
        accountId,
        fullname: state.users.get(accountId)?.fullname ?? '',
      }));
    case 'Department':
      return list(value).map((departmentId) => ({
        departmentId,
        departmentName: state.departments.get(departmentId)?.name ?? '',
      }));
    case 'Relation': {
      const target = field.dataSource === undefined ? undefined : state.worksheets.get(field.dataSource);
      if (target === undefined) return [];
      const out: Array<{ sid: string; name: string }> = [];
      for (const sid of list(value)) {
        const related = target.table.byId.get(sid);
        // Related rows deleted since the write drop out of the relation.
        if (related !== undefined && !related.deleted)
          out.push({ sid, name: titleText(state, target, related) });
      }
      return out;
    }
    case 'Attachment':
    case 'OrgRole':
    case 'CascadingSelect':
    case 'SubTable':
    case 'DateRange':
      return Array.isArray(value) ? value : [];
    case 'Location':
      return value ?? null;
    case 'AutoNumber':
      return String(row.autoId);
    case 'Time':
      // subType 1 reads HH:mm, 6 HH:mm:ss (platform-shapes §4, §6).
      return typeof value !== 'string' ? '' : field.subType === 1 ? value.slice(0, 5) : value;
    default:
      return typeof value === 'string' ? value : '';
  }
}

/** `YYYY-MM-DD HH:mm:ss` of an instant in a zone: how the platform writes its timestamps (platform-shapes §3 [C]). */
function wallClock(epochMs: number, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(epochMs));
  const at = (type: string) => parts.find((p) => p.type === type)?.value ?? '00';
  return `${at('year')}-${at('month')}-${at('day')} ${at('hour')}:${at('minute')}:${at('second')}`;
}

/** The platform's user object (platform-shapes §5 [C]). */
function platformUser(user: { accountId: string; fullname: string }): Record<string, unknown> {
  return { accountId: user.accountId, fullname: user.fullname, avatar: '', isPortal: false, status: 1 };
}

function systemFields(row: StoredRow, options: RenderOptions): Record<string, unknown> {
  if (options.dialect === 'platform') {
    const zone = options.timeZone ?? 'Asia/Shanghai';
    return {
      _createdAt: wallClock(row.createdAt, zone),
      _updatedAt: wallClock(row.updatedAt, zone),
      _createdBy: platformUser(row.createdBy),
      _updatedBy: platformUser(row.updatedBy),
      _owner: platformUser(row.owner),
      autoid: row.autoId,
    };
  }
  return {
    _createdBy: row.createdBy,
    _owner: row.owner,
    _updatedBy: row.updatedBy,
    _createdAt: new Date(row.createdAt).toISOString(),
    _updatedAt: new Date(row.updatedAt).toISOString(),
  };
}

/** A stable UUID-form id for a stored attachment: the platform's file ids are UUIDs (platform-shapes §6 [L]). */
function fileId(seed: string): string {
  const h = createHash('sha1').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * A SubTable cell: the parent does not carry its child rows; the platform default chosen
 * here is their count (platform-shapes §6 [U]), the rows of `dataSource` whose reverse
 * field `sourceField` links this row.
 */
function childCount(state: EmulatorState, field: FieldRecord, row: StoredRow): number {
  const child = field.dataSource === undefined ? undefined : state.worksheets.get(field.dataSource);
  const reverse = child?.byKey.get(field.sourceField);
  if (child === undefined || reverse === undefined) return list(row.values[field.id]).length;
  let count = 0;
  for (const r of child.table.order)
    if (!r.deleted && list(r.values[reverse.id]).includes(row.id)) count += 1;
  return count;
}

/**
 * The platform's read shapes where they differ from the seed spec's (platform-shapes §6):
 * members `{accountId, fullname, avatar, status}` [L], attachments `{file_id, file_name,
 * file_size, downloadUrl}` [L], a region `{code, name}` with the `/`-joined path [U].
 */
function platformReadShape(
  state: EmulatorState,
  field: FieldRecord,
  row: StoredRow,
  value: unknown,
): unknown {
  switch (field.type) {
    case 'Collaborator':
      return (value as Array<{ accountId: string; fullname: string }>).map((m) => ({
        ...m,
        avatar: '',
        status: 1,
      }));
    case 'Attachment':
      return (value as Array<{ name?: string; url?: string }>).map((a, i) => ({
        file_id: fileId(`${row.id}/${field.id}/${i}/${a.url ?? ''}`),
        file_name: a.name ?? '',
        file_size: 0,
        downloadUrl: a.url ?? '',
      }));
    case 'AutoNumber':
      // Zero-padded to four digits, as the platform's default numbering shows it (platform-shapes §6 [U]).
      return String(row.autoId).padStart(4, '0');
    case 'SubTable':
      return String(childCount(state, field, row));
    case 'Region': {
      if (typeof value !== 'string' || value === '') return value;
      const names: string[] = [];
      for (
        let r = state.regions.get(value);
        r !== undefined;
        r = r.parentCode === null ? undefined : state.regions.get(r.parentCode)
      )
        names.unshift(r.name);
      return { code: value, name: names.join('/') };
    }
    default:
      return value;
  }
}

export function renderRow(
  state: EmulatorState,
  ws: WorksheetRecord,
  row: StoredRow,
  options: RenderOptions,
): Record<string, unknown> {
  const fields = options.fields ?? ws.fields;
  const system = options.includeSystemFields ? systemFields(row, options) : {};
  if (options.shape === 'fields') {
    return {
      id: row.id,
      fields: fields.map((f) => ({
        id: f.id,
        alias: f.alias,
        value: readValue(state, f, row),
        type: typeOut(f.type, options.typeFormat),
        controlName: f.name,
      })),
      ...system,
    };
  }
  // The platform's row id key is `id` (platform-shapes §5 [C]); the spec's flat form also had `rowid`.
  const platform = options.dialect === 'platform';
  const flat: Record<string, unknown> = platform ? { id: row.id } : { rowid: row.id, id: row.id };
  for (const f of fields) {
    const value = readValue(state, f, row);
    // What key an empty-alias field gets in alias mode is undocumented (platform-shapes §5 [U]);
    // the display name is a guess a client cannot match by id, so one that omits
    // `useFieldIdAsKey: true` shows its mistake here.
    flat[options.useFieldIdAsKey ? f.id : f.alias === '' ? f.name : f.alias] = platform
      ? platformReadShape(state, f, row, value)
      : value;
  }
  return Object.assign(flat, system);
}
