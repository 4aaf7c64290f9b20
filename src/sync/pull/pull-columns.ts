/**
 * The columns of a pull by the worksheet fields they come from: their Postgres type (a
 * Number field is `numeric`, not text; a multi-value field `jsonb`, an array of the texts
 * a csv pull joins) and one form for their times. A worksheet's
 * DateTime values arrive as the organisation's wall clock and its system times
 * (`_createdAt`, `_updatedAt`) as UTC instants; written side by side they read as two
 * different clocks, so every time column of a pull takes one form (`timeFormat`).
 */
import { fieldTypeName, type FieldTypeName } from '../../api/field-types.ts';
import type { WorksheetField, WorksheetStructure } from '../../api/types.ts';
import { createZoneClock, type ZoneClock } from '../../api/zone-clock.ts';
import type { PlatformClient } from '../../api/create-platform-client.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import type { PullColumnType } from '../sinks/sink-spec.ts';
import type { FieldMapping } from '../model/types.ts';
import { isMultiValueField, type ListForm } from './person-values.ts';

/** How the times of a pull are written: the organisation's wall clock, or ISO 8601 with its offset. */
export type TimeFormat = 'wall' | 'iso';

const BY_TYPE: Partial<Record<FieldTypeName, PullColumnType>> = {
  Number: 'numeric',
  Currency: 'numeric',
  Rating: 'numeric',
  AutoNumber: 'numeric',
  Checkbox: 'boolean',
  Date: 'date',
  DateTime: 'timestamptz',
};

const SYSTEM_TIMES = new Set(['_createdAt', '_updatedAt', 'ctime', 'utime']);

/** Target column → its type, for every mapping read from a worksheet field or system time. */
export function pullColumnTypes(
  mappings: readonly FieldMapping[],
  structure: WorksheetStructure,
): Record<string, PullColumnType> {
  const byKey = new Map<string, WorksheetField>();
  for (const field of structure.fields) {
    byKey.set(field.id, field);
    if (field.alias !== undefined && field.alias !== '') byKey.set(field.alias, field);
  }
  const typeOf = (field: WorksheetField | undefined): PullColumnType | undefined => {
    if (field === undefined) return undefined;
    if (isMultiValueField(field)) return 'jsonb';
    return BY_TYPE[fieldTypeName(field.type) ?? 'Text'];
  };
  const types: Record<string, PullColumnType> = {};
  for (const m of mappings) {
    if (m.from === undefined) continue;
    const type = SYSTEM_TIMES.has(m.from) ? 'timestamptz' : typeOf(byKey.get(m.from));
    if (type !== undefined) types[m.target] = type;
  }
  return types;
}

const WALL = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/;

function offsetText(clock: ZoneClock, instant: number): string {
  const wall = clock.formatDateTime(instant);
  const asUtc = Date.parse(`${wall.replace(' ', 'T')}Z`);
  const minutes = Math.round((asUtc - instant) / 60_000);
  const abs = Math.abs(minutes);
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/**
 * Rewrites the time columns of a projected record in `format`, in the organisation's
 * `zone`: a wall-clock value is read in that zone, an instant (`Z` or an offset) as it
 * is. Anything else (not a time) stays as it is. Undefined when no column is a time.
 */
export function createTimeForm(
  types: Readonly<Record<string, PullColumnType>>,
  zone: string,
  format: TimeFormat,
): ((record: Record<string, unknown>) => void) | undefined {
  const columns = Object.keys(types).filter((c) => types[c] === 'timestamptz');
  if (columns.length === 0) return undefined;
  const clock = createZoneClock(zone);
  const instantOf = (text: string): number | undefined => {
    const wall = WALL.exec(text);
    if (wall !== null) {
      const [, y, mo, d, h, mi, s] = wall.map(Number);
      return clock.toInstant(y!, mo!, d!, h!, mi!, Number.isNaN(s) ? 0 : s!);
    }
    if (!/[zZ]$|[+-]\d{2}:?\d{2}$/.test(text)) return undefined;
    const ms = Date.parse(text);
    return Number.isNaN(ms) ? undefined : ms;
  };
  return (record) => {
    for (const column of columns) {
      const value = record[column];
      if (typeof value !== 'string' || value === '') continue;
      const instant = instantOf(value.trim());
      if (instant === undefined) continue;
      const wall = clock.formatDateTime(instant);
      record[column] = format === 'wall' ? wall : `${wall.replace(' ', 'T')}${offsetText(clock, instant)}`;
    }
  };
}

/**
 * The column types, time form and list form of a pull job: its worksheet's structure read
 * once (the source reads it again; one request per run), its organisation's zone. A
 * Postgres sink takes times as ISO instants (its columns are timestamptz) and multi-value
 * fields as arrays (jsonb); a file sink times as `timeFormat` says and lists joined.
 */
export async function readPullColumns(
  client: Pick<PlatformClient, 'worksheets' | 'organisation'>,
  spec: JobSpec,
): Promise<{
  types: Record<string, PullColumnType>;
  timeForm: ((record: Record<string, unknown>) => void) | undefined;
  lists: ListForm;
}> {
  if (spec.source.type !== 'worksheet' || spec.sink === undefined)
    return { types: {}, timeForm: undefined, lists: 'joined' };
  const structure = await client.worksheets.get(spec.source.worksheet);
  const types = pullColumnTypes(spec.mappings, structure);
  const postgres = spec.sink.type === 'postgres';
  const format: TimeFormat = spec.sink.type === 'postgres' ? 'iso' : (spec.sink.timeFormat ?? 'wall');
  return {
    types,
    timeForm: createTimeForm(types, client.organisation.timeZone, format),
    lists: postgres ? 'array' : 'joined',
  };
}
