/**
 * The fields of a two-way job: each worksheet field with its column, its comparison
 * form on both sides, its policy and direction. Everything a run decides per field is
 * decided here once, and a field that cannot go both ways is refused before any read.
 */
import { hash } from 'node:crypto';
import { fieldTypeName, READ_ONLY_FIELD_TYPES } from '../../api/field-types.ts';
import type { FieldTypeName } from '../../api/field-types.ts';
import type { WorksheetField, WorksheetStructure } from '../../api/types.ts';
import { createZoneClock } from '../../api/zone-clock.ts';
import type { ZoneClock } from '../../api/zone-clock.ts';
import { ConfigError } from '../../ground/errors.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import { fieldOptions } from '../job-spec/two-way-options.ts';
import type { ConflictPolicy, FieldDirection } from '../job-spec/two-way-options.ts';

/** One field of a two-way job, ready for comparison. */
export interface TwoWayField {
  /** The worksheet field as the job names it (id or alias): the key of its base hash. */
  readonly target: string;
  readonly fieldId: string;
  readonly type: FieldTypeName;
  /** Source column; undefined for a constant (`value:`, to-worksheet only). */
  readonly column: string | undefined;
  readonly conflict: ConflictPolicy;
  readonly direction: FieldDirection;
  /** IANA zone a zone-less source timestamp is read in. */
  readonly sourceZone: ZoneClock;
}

// Read as a list of labels: order does not count, so they compare sorted.
// A relation reads as its related rows' keys (two-way-rows.ts).
const SET_LIKE: ReadonlySet<FieldTypeName> = new Set([
  'MultipleSelect',
  'Collaborator',
  'Department',
  'Relation',
]);
const NUMERIC: ReadonlySet<FieldTypeName> = new Set(['Number', 'Currency', 'Rating']);
// Attachments, locations and regions have no text both sides agree on yet.
const UNSUPPORTED: ReadonlySet<FieldTypeName> = new Set(['Attachment', 'Location', 'Region', 'SubTable']);

/**
 * Compiles the fields of a two-way job against the worksheet structure and the table's
 * generated columns. Refuses, naming the job file and field, what cannot be written on
 * one side unless the field says `direction:`.
 */
export function twoWayFields(
  spec: JobSpec,
  structure: WorksheetStructure,
  generatedColumns: ReadonlySet<string>,
  file: string,
): TwoWayField[] {
  const problems: string[] = [];
  const byRef = new Map<string, WorksheetField>();
  for (const f of structure.fields) {
    byRef.set(f.id, f);
    if (f.alias !== undefined && f.alias !== '' && !byRef.has(f.alias)) byRef.set(f.alias, f);
  }
  const policy = spec.target?.conflict ?? 'newest';
  const zone = spec.options.timezone ?? 'UTC';
  const fields: TwoWayField[] = [];
  for (const mapping of spec.mappings) {
    const at = `fields.${mapping.target}`;
    const options = fieldOptions(spec, mapping.target);
    const direction = options.direction ?? 'both';
    const field = byRef.get(mapping.target);
    if (field === undefined) {
      problems.push(`${at}: worksheet ${structure.name} has no field ${mapping.target}`);
      continue;
    }
    const type = fieldTypeName(field.type) ?? 'Text';
    const column = mapping.from;
    if (UNSUPPORTED.has(type)) {
      problems.push(
        `${at}: ${type} field ${field.name} is not synced two-way (only its text would be, and it cannot be written back); leave it out of this job`,
      );
      continue;
    }
    if (direction !== 'to-source' && (field.isReadOnly === true || READ_ONLY_FIELD_TYPES.has(type)))
      problems.push(`${at}: ${type} field ${field.name} cannot be written; add direction: to-source`);
    if (direction !== 'to-worksheet' && column === undefined)
      problems.push(`${at}: a constant cannot be written to the table; add direction: to-worksheet`);
    if (direction !== 'to-worksheet' && column !== undefined && generatedColumns.has(column))
      problems.push(
        `${at}: column ${column} is generated and cannot be written; add direction: to-worksheet`,
      );
    fields.push({
      target: mapping.target,
      fieldId: field.id,
      type,
      column,
      conflict: options.conflict ?? policy,
      direction,
      sourceZone: createZoneClock(mapping.timezone ?? zone),
    });
  }
  if (problems.length > 0)
    throw new ConfigError(
      `${file}: these fields cannot be synced two-way:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
  return fields;
}

const WALL_CLOCK = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?)?$/;

/** Epoch ms of a value: a Date, an ISO instant, or a wall clock read in `clock`'s zone. */
export function instantOf(value: unknown, clock: ZoneClock): number | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.getTime();
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const m = WALL_CLOCK.exec(value.trim());
  if (m !== null) {
    const [y, mo, d, h, mi, s] = m.slice(1).map((part) => Number(part ?? 0));
    return clock.toInstant(y!, mo!, d!, h!, mi!, s!);
  }
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? undefined : parsed;
}

/**
 * A value in the form both sides are compared in: text for text, a plain number, `1`/`0`
 * for a checkbox, `YYYY-MM-DD` for a date, an ISO instant to the second for a date-time,
 * option texts and member names (sorted when several). Empty is ''. `clock` is the zone
 * a zone-less date-time is in (the organisation's on the worksheet side, the mapping's on
 * the table side).
 */
export function comparable(type: FieldTypeName, value: unknown, clock: ZoneClock): string {
  if (value === null || value === undefined || value === '') return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (Array.isArray(value)) {
    const parts = value.map((v) => comparable(type, v, clock)).filter((v) => v !== '');
    return SET_LIKE.has(type) ? parts.sort().join('\n') : parts.join('\n');
  }
  if (NUMERIC.has(type)) {
    const n = typeof value === 'number' ? value : Number(text.trim());
    return Number.isFinite(n) ? String(n) : text;
  }
  switch (type) {
    case 'Checkbox':
      return value === true || value === 1 || value === '1' || value === 'true' ? '1' : '0';
    case 'Date': {
      if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value)) return value.slice(0, 10);
      const at = instantOf(value, clock);
      return at === undefined ? text : clock.formatDate(at);
    }
    case 'DateTime': {
      const at = instantOf(value, clock);
      return at === undefined ? text : new Date(Math.floor(at / 1000) * 1000).toISOString();
    }
    default:
      if (SET_LIKE.has(type) && typeof value === 'string')
        return value
          .split(', ')
          .filter((v) => v !== '')
          .sort()
          .join('\n');
      return typeof value === 'string' ? value : JSON.stringify(value);
  }
}

/** The stored form of a comparable value: 8 bytes of SHA-1, so the link table stays small. */
export function valueHash(comparableValue: string): string {
  return hash('sha1', comparableValue, 'buffer').subarray(0, 8).toString('base64url');
}

/** A comparable value as the table takes it: null for empty, a number, a boolean, text. */
export function toColumnValue(
  field: TwoWayField,
  comparableValue: string,
  column: { zoneLess: boolean } | undefined,
): unknown {
  if (comparableValue === '') return null;
  if (NUMERIC.has(field.type)) return Number(comparableValue);
  if (field.type === 'Checkbox') return comparableValue === '1';
  if (SET_LIKE.has(field.type)) return comparableValue.split('\n').join(', ');
  if (field.type === 'DateTime' && column?.zoneLess === true) {
    const at = Date.parse(comparableValue);
    return Number.isNaN(at) ? comparableValue : field.sourceZone.formatDateTime(at);
  }
  return comparableValue;
}

/**
 * The values a link keeps besides its hashes: those of the fields that can wait on a
 * person (`conflict: manual`, copied both ways), so a conflict can show the last synced
 * value. Undefined when the job has none, so other jobs store hashes only.
 */
export function lastSynced(
  fields: readonly TwoWayField[],
  comparableValues: Readonly<Record<string, string>>,
): Record<string, string> | undefined {
  const manual = fields.filter((f) => f.conflict === 'manual' && f.direction === 'both');
  if (manual.length === 0) return undefined;
  return Object.fromEntries(manual.map((f) => [f.target, comparableValues[f.target] ?? '']));
}
