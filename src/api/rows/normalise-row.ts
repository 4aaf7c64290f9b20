/**
 * Reads a worksheet row in either wire shape into one {@link NormalisedRow} (platform
 * notes §5 [C]): the spec's `{id, fields: [{id, value, type, controlName}], _createdAt, ...}`
 * and the public platform's flat object keyed by alias (or by field id with
 * `useFieldIdAsKey`), whose system fields may carry the earlier names (ctime, caid, ...).
 * Cell values are passed on as received; converting them is the mapping's job.
 */
import type { WireRow, WorksheetField, WorksheetStructure } from '../types.ts';
import type { NormalisedRow } from '../../sync/types.ts';
import { createTimestampParser } from './parse-platform-timestamp.ts';
import type { TimestampParser } from './parse-platform-timestamp.ts';
import { readUserRef } from './read-user-ref.ts';
import { RowShapeError } from './row-errors.ts';
import { wireRowId } from './wire-row-id.ts';

export { parsePlatformTimestamp } from './parse-platform-timestamp.ts';

export interface RowNormaliserOptions {
  /** Lets values be keyed by field id AND alias, whichever the row used. */
  structure?: WorksheetStructure;
  /**
   * IANA zone of timestamps sent without a zone (`2024-03-25 15:52:58`): the
   * organisation's time zone.
   * @defaultValue 'UTC'
   */
  timeZone?: string;
}

type Target = 'createdAt' | 'updatedAt' | 'createdBy' | 'updatedBy' | 'owner';

/** System fields with a place of their own in NormalisedRow, by v3 and earlier name (spec §2). */
// Maps, not object literals: a row key such as "__proto__" must not find Object.prototype.
const KNOWN_SYSTEM: ReadonlyMap<string, { target: Target; v3: boolean }> = new Map([
  ['_createdAt', { target: 'createdAt', v3: true }],
  ['ctime', { target: 'createdAt', v3: false }],
  ['_updatedAt', { target: 'updatedAt', v3: true }],
  ['utime', { target: 'updatedAt', v3: false }],
  ['_createdBy', { target: 'createdBy', v3: true }],
  ['caid', { target: 'createdBy', v3: false }],
  ['_updatedBy', { target: 'updatedBy', v3: true }],
  ['uaid', { target: 'updatedBy', v3: false }],
  ['_owner', { target: 'owner', v3: true }],
  ['ownerid', { target: 'owner', v3: false }],
]);

/** Other earlier system names, kept in `system` under their v3 names (spec §2). */
const EARLIER_NAMES: ReadonlyMap<string, string> = new Map([
  ['wfname', '_processName'],
  ['wfcuaids', '_nodeAssignees'],
  ['wfcaid', '_initiatedBy'],
  ['wfctime', '_initiatedAt'],
  ['wfrtime', '_nodeStartedAt'],
  ['wfcotime', '_approvalCompletedAt'],
  ['wfdtime', '_dueAt'],
  ['wfftime', '_remainingTime'],
  ['wfstatus', '_processStatus'],
  ['autoid', '_autoId'],
]);

const ROW_ID_KEYS: ReadonlySet<string> = new Set(['rowid', 'id']);

/** Assigns without letting a `__proto__` key from JSON reach the prototype. */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

function isSpecShape(
  row: Record<string, unknown>,
  fieldsByKey: ReadonlyMap<string, WorksheetField>,
): boolean {
  // A flat row may have a user field aliased "fields"; the structure tells them apart.
  if (fieldsByKey.has('fields')) return false;
  const { fields } = row;
  return (
    Array.isArray(fields) &&
    fields.every(
      (cell) =>
        typeof cell === 'object' &&
        cell !== null &&
        typeof (cell as { id?: unknown }).id === 'string' &&
        'value' in cell,
    )
  );
}

/**
 * A normaliser for rows of one worksheet. With a structure, each value is stored under
 * the field's id and its alias; keys the structure does not know (a field added since it
 * was read) are kept as received.
 */
export function createRowNormaliser(options: RowNormaliserOptions = {}): (row: WireRow) => NormalisedRow {
  const parseTimestamp: TimestampParser = createTimestampParser(options.timeZone);
  const fieldsByKey = new Map<string, WorksheetField>();
  for (const field of options.structure?.fields ?? []) {
    if (field.alias !== undefined && field.alias !== '') fieldsByKey.set(field.alias, field);
  }
  // Ids win over aliases when one field's alias equals another field's id.
  for (const field of options.structure?.fields ?? []) fieldsByKey.set(field.id, field);

  return (wire) => {
    if (typeof wire !== 'object' || wire === null || Array.isArray(wire)) {
      throw new RowShapeError(`a row must be an object, got ${wire === null ? 'null' : typeof wire}`);
    }
    const row = wire as Record<string, unknown>;
    const id = wireRowId(wire);
    if (id === undefined) {
      const keys = Object.keys(row).slice(0, 10).join(', ');
      throw new RowShapeError(
        `row has no id: expected a non-empty string in "rowid" or "id"; keys present: ${keys}`,
      );
    }
    const values: Record<string, unknown> = {};
    const system: Record<string, unknown> = {};
    const found: Partial<Record<Target, { value: unknown; v3: boolean; key: string }>> = {};

    const putValue = (key: string, value: unknown, alias?: unknown) => {
      const field = fieldsByKey.get(key);
      if (field === undefined) {
        put(values, key, value);
        if (typeof alias === 'string' && alias !== '') put(values, alias, value);
        return;
      }
      put(values, field.id, value);
      if (field.alias !== undefined && field.alias !== '') put(values, field.alias, value);
    };
    const putSystem = (key: string, value: unknown) => {
      const known = KNOWN_SYSTEM.get(key);
      if (known !== undefined) {
        // The v3 name wins when a row carries both spellings.
        const previous = found[known.target];
        if (previous === undefined || known.v3 || !previous.v3)
          found[known.target] = { value, v3: known.v3, key };
        return;
      }
      put(system, EARLIER_NAMES.get(key) ?? key, value);
    };

    const spec = isSpecShape(row, fieldsByKey);
    for (const [key, value] of Object.entries(row)) {
      if (spec && key === 'fields') continue;
      if (ROW_ID_KEYS.has(key)) continue;
      if (!spec && fieldsByKey.has(key)) putValue(key, value);
      else if (spec || key.startsWith('_') || KNOWN_SYSTEM.has(key) || EARLIER_NAMES.has(key)) {
        putSystem(key, value);
      } else putValue(key, value);
    }
    if (spec) {
      for (const cell of row.fields as Array<{ id: string; value: unknown; alias?: unknown }>) {
        putValue(cell.id, cell.value, cell.alias);
      }
    }

    const result: NormalisedRow = { id, values, system };
    for (const [target, entry] of Object.entries(found) as Array<[Target, { value: unknown; key: string }]>) {
      if (entry.value === undefined || entry.value === null || entry.value === '') continue;
      try {
        if (target === 'createdAt' || target === 'updatedAt') result[target] = parseTimestamp(entry.value);
        else {
          const ref = readUserRef(entry.value);
          if (ref !== undefined) result[target] = ref;
        }
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        throw new RowShapeError(`row ${id}: ${entry.key}: ${reason}`, {
          rowId: id,
          field: entry.key,
          cause: err,
        });
      }
    }
    return result;
  };
}

/**
 * Normalises one row. For many rows of one worksheet, build the normaliser once with
 * {@link createRowNormaliser}.
 */
export function normaliseRow(
  row: WireRow,
  structure?: WorksheetStructure,
  options: Omit<RowNormaliserOptions, 'structure'> = {},
): NormalisedRow {
  return createRowNormaliser(structure === undefined ? options : { ...options, structure })(row);
}
