/**
 * One canonical string per field value, whatever form it arrives in: the mapped write
 * form or any read form the platform answers with (platform notes §4: numbers read as
 * "9.99", Checkbox as "1"/"0", selects as key arrays, {key, value} arrays or JSON
 * strings of them, relations as [{sid, name}], dates as strings). The same function on
 * both sides makes an unchanged row compare equal, a key match by the same rule, and
 * a content hash independent of how the source typed a value.
 */
import type { PlannedField } from './plan-types.ts';
import { findOption } from './option-index.ts';
import type { ZoneClock } from '../../api/zone-clock.ts';

const SEP = '\u001f';
const DATE_PREFIX = /^\d{4}-\d{2}-\d{2}/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:[.,]\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;
const CLOCK = /^(\d{1,2}):(\d{2})(?::(\d{2}))?/;
const GROUPED_NUMBER = /^[+-]?[\d,]*\.?\d*$/;

function isBlank(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/** A list from an array, a JSON string of an array, or a single value. */
function listOf(value: unknown): unknown[] {
  if (isBlank(value)) return [];
  if (Array.isArray(value)) return value as unknown[];
  if (typeof value === 'string' && value.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(value);
      if (Array.isArray(parsed)) return parsed as unknown[];
    } catch {
      // not JSON after all: a single value that starts with "["
    }
  }
  return [value];
}

function scalarText(value: unknown): string {
  if (isBlank(value)) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    const code = o.code ?? o.id;
    if (typeof code === 'string' || typeof code === 'number') return String(code);
  }
  return JSON.stringify(value);
}

function numberText(value: unknown, precision: number | undefined): string {
  if (isBlank(value)) return '';
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && GROUPED_NUMBER.test(value.trim()))
    n = Number(value.trim().replaceAll(',', ''));
  else return `?${scalarText(value)}`;
  if (!Number.isFinite(n)) return `?${scalarText(value)}`;
  // The platform stores a Currency with its precision; 9.999 written reads back "10.00".
  if (precision !== undefined && precision >= 0 && precision <= 20) n = Number(n.toFixed(precision));
  return String(n === 0 ? 0 : n);
}

function checkboxText(value: unknown): string {
  return value === true || value === 1 || value === '1' || value === 'true' ? '1' : '0';
}

function dateTimeText(value: unknown, clock: ZoneClock): string {
  if (isBlank(value)) return '';
  if (value instanceof Date) return clock.formatDateTime(value.getTime());
  const text = scalarText(value).trim();
  const m = DATE_TIME.exec(text);
  if (m === null) return `?${text}`;
  const [, y, mo, d, h = '00', mi = '00', s = '00', zone] = m;
  if (zone === undefined) return `${y}-${mo}-${d} ${h}:${mi}:${s}`;
  const instant = Date.parse(
    `${y}-${mo}-${d}T${h}:${mi}:${s}${zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone.toUpperCase()}`,
  );
  return Number.isNaN(instant) ? `?${text}` : clock.formatDateTime(instant);
}

function timeText(value: unknown): string {
  if (isBlank(value)) return '';
  const text = scalarText(value).trim();
  const m = CLOCK.exec(text);
  if (m === null) return `?${text}`;
  return `${(m[1] ?? '').padStart(2, '0')}:${m[2] ?? '00'}:${m[3] ?? '00'}`;
}

/** What the canonical form reads of a field: a planned field, or a related worksheet's key (relation lookups). */
export type CanonicalField = Pick<PlannedField, 'type' | 'precision' | 'options'>;

function selectItem(field: CanonicalField, item: unknown): string {
  const options = field.options;
  let key: string | undefined;
  let text: string | undefined;
  if (typeof item === 'string') key = item;
  else if (typeof item === 'object' && item !== null) {
    const o = item as { key?: unknown; value?: unknown };
    if (typeof o.key === 'string') key = o.key;
    if (typeof o.value === 'string') text = o.value;
  } else return `?${scalarText(item)}`;
  if (options !== undefined) {
    if (key !== undefined && options.byKey.has(key)) return key;
    // An option created by this sync (type "2") is not in the plan's structure: it
    // compares by its text, as the mapped text does.
    const byText = findOption(options, (text ?? key ?? '').trim());
    if (byText !== undefined) return byText.key;
  }
  return `\u0000${(text ?? key ?? '').trim().toLowerCase()}`;
}

const ID_KEYS = ['accountId', 'departmentId', 'sid', 'rowid', 'id', 'key'] as const;

function idItem(item: unknown): string {
  if (typeof item === 'string') return item;
  if (typeof item === 'object' && item !== null) {
    const o = item as Record<string, unknown>;
    for (const k of ID_KEYS) {
      const v = o[k];
      if (typeof v === 'string' && v !== '') return v;
    }
  }
  return `?${scalarText(item)}`;
}

function attachmentItem(item: unknown): string {
  if (typeof item === 'object' && item !== null) {
    const o = item as Record<string, unknown>;
    // The written form is {name, url}; reads are {file_id, file_name, file_size,
    // downloadUrl} (platform-shapes §6 [L]), or fileName in other guides [U].
    const name =
      o.name ?? o.file_name ?? o.originalFileName ?? o.originalFilename ?? o.fileName ?? o.filename;
    if (typeof name === 'string') return name;
  }
  return `?${scalarText(item)}`;
}

function setText(items: string[]): string {
  return [...new Set(items)].sort().join(SEP);
}

/** The canonical string of `value` (written or read) for `field`. DateTime reads with a zone are shown in `clock`. */
export function canonicalValue(field: CanonicalField, value: unknown, clock: ZoneClock): string {
  switch (field.type) {
    case 'Number':
    case 'Currency':
    case 'Rating':
      return numberText(value, field.precision);
    case 'Checkbox':
      return checkboxText(value);
    case 'Date': {
      const text = scalarText(value).trim();
      return DATE_PREFIX.test(text) ? text.slice(0, 10) : text;
    }
    case 'DateTime':
      return dateTimeText(value, clock);
    case 'Time':
      return timeText(value);
    case 'SingleSelect':
    case 'Dropdown':
    case 'MultipleSelect':
      return setText(listOf(value).map((item) => selectItem(field, item)));
    case 'Collaborator':
    case 'Department':
    case 'Relation':
      return setText(listOf(value).map(idItem));
    case 'Attachment':
      // Reads return the platform's own download URLs, never the source URLs, so files
      // compare by name [U]: a changed file behind an unchanged name is not detected.
      return listOf(value).map(attachmentItem).sort().join(SEP);
    default:
      return scalarText(value);
  }
}
