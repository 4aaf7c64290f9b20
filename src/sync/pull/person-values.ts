/**
 * A worksheet row's values in a person's form, for pull jobs and worksheet sources: what
 * someone reading a CSV or a table expects, not the platform's read shapes
 * (platform-shapes §6). Option texts, member names, department names, relation titles
 * and attachments (`name (url)`) joined with ", "; numbers as numbers; a checkbox as a
 * boolean; a region by name; a location by its address. Empty lists become null. With
 * `lists: 'array'` a multi-value field keeps its values apart, as an array of the same
 * texts (a Postgres pull's jsonb column): an option text may hold ", " itself.
 */
import { type FieldTypeName, fieldTypeName } from '../../api/field-types.ts';
import type { WorksheetField, WorksheetStructure } from '../../api/types.ts';

const NUMERIC: ReadonlySet<FieldTypeName> = new Set([
  'Number',
  'Currency',
  'Rating',
  'Formula',
  'Rollup',
  'SubTable',
]);

/** Keys of the readable part of a list item, in order of preference, by read shape. */
const LABEL_KEYS = [
  'value',
  'fullname',
  'departmentName',
  'name',
  'file_name',
  'fileName',
  'title',
  'address',
];

function label(item: unknown): string {
  if (item === null || item === undefined) return '';
  if (typeof item === 'string') return item;
  if (typeof item === 'number' || typeof item === 'boolean' || typeof item === 'bigint') return String(item);
  if (typeof item !== 'object') return '';
  const o = item as Record<string, unknown>;
  for (const key of LABEL_KEYS) {
    const value = o[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return JSON.stringify(item);
}

function attachment(item: unknown): string {
  if (typeof item !== 'object' || item === null) return label(item);
  const o = item as Record<string, unknown>;
  // platform-shapes §6 [L]: file_name + downloadUrl; other guides show fileName / url [U].
  const name = [o.file_name, o.fileName, o.name].find((v) => typeof v === 'string' && v !== '');
  const url = [o.downloadUrl, o.url].find((v) => typeof v === 'string' && v !== '');
  if (typeof name === 'string' && typeof url === 'string') return `${name} (${url})`;
  return typeof url === 'string' ? url : label(item);
}

function asNumber(value: unknown): unknown {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string' || value.trim() === '') return value === '' ? null : value;
  const n = Number(value);
  return Number.isFinite(n) ? n : value;
}

function joined(list: readonly unknown[], each: (item: unknown) => string): string | null {
  const parts = list.map(each).filter((s) => s !== '');
  return parts.length === 0 ? null : parts.join(', ');
}

function texts(value: unknown, each: (item: unknown) => string): string[] | null {
  const parts = (Array.isArray(value) ? value : [value]).map(each).filter((s) => s !== '');
  return parts.length === 0 ? null : parts;
}

/** How a multi-value field is written: its texts joined with ", " (a csv cell), or apart as an array. */
export type ListForm = 'joined' | 'array';

/**
 * Whether a field may hold several values: multiple options, members (`subType` 1),
 * related rows (`subType` 2), departments, organisation roles, attachments, a cascading
 * select's path (platform-shapes §4).
 */
export function isMultiValueField(field: Pick<WorksheetField, 'type' | 'subType'>): boolean {
  switch (fieldTypeName(field.type)) {
    case 'MultipleSelect':
    case 'Department':
    case 'OrgRole':
    case 'Attachment':
    case 'CascadingSelect':
      return true;
    case 'Collaborator':
      return field.subType === 1;
    case 'Relation':
      return field.subType === 2;
    default:
      return false;
  }
}

/** One value in a person's form, by the field's type. */
export function personValue(
  type: FieldTypeName | undefined,
  value: unknown,
  lists: ListForm = 'joined',
): unknown {
  if (value === undefined || value === null) return null;
  if (type !== undefined && NUMERIC.has(type)) return asNumber(value);
  if (lists === 'array') return texts(value, type === 'Attachment' ? attachment : label);
  switch (type) {
    case 'Checkbox':
      if (value === '1' || value === 1 || value === true) return true;
      if (value === '0' || value === 0 || value === false) return false;
      return value === '' ? null : value;
    case 'Attachment':
      return Array.isArray(value) ? joined(value, attachment) : attachment(value);
    case 'Location': {
      let location: unknown = value;
      if (typeof value === 'string' && value.startsWith('{')) {
        try {
          location = JSON.parse(value) as unknown;
        } catch {
          return value;
        }
      }
      if (typeof location !== 'object' || location === null) return location;
      const { address, title } = location as { address?: unknown; title?: unknown };
      const text = [address, title].find((v) => typeof v === 'string' && v !== '');
      return typeof text === 'string' ? text : label(location) || null;
    }
    default:
      if (Array.isArray(value)) return joined(value, label);
      if (typeof value === 'object') return label(value) || null;
      return value;
  }
}

/**
 * Converts every value of a row of `structure` (keyed by field id and alias); unknown keys
 * pass as they are. `lists` is how the multi-value fields ({@link isMultiValueField}) are written.
 */
export function createPersonForm(
  structure: WorksheetStructure,
  lists: ListForm = 'joined',
): (values: Readonly<Record<string, unknown>>) => Record<string, unknown> {
  const byKey = new Map<string, WorksheetField>();
  for (const field of structure.fields) {
    if (field.alias !== undefined && field.alias !== '') byKey.set(field.alias, field);
  }
  for (const field of structure.fields) byKey.set(field.id, field);
  const types = new Map<string, FieldTypeName | undefined>();
  const forms = new Map<string, ListForm>();
  for (const [key, field] of byKey) {
    types.set(key, fieldTypeName(field.type));
    forms.set(key, lists === 'array' && isMultiValueField(field) ? 'array' : 'joined');
  }
  return (values) => {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(values)) {
      out[key] = byKey.has(key) ? personValue(types.get(key), value, forms.get(key)) : value;
    }
    return out;
  };
}
