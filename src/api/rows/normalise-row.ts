/**
 * Reads a worksheet row in either wire shape into one {@link NormalisedRow}: the public
 * platform's flat object keyed by alias (or by field id with `useFieldIdAsKey`), id
 * under `id` (or `rowid`, the older export's key) (platform-shapes §5 [C]), and the seed
 * spec's `{id, fields: [{id, value, type, controlName}], ...}`. System fields come under
 * the v3 names, the export's typos `_createAt`/`_createBy` (§6 [C]), the older export's
 * `createdAt`/`createdBy`/`updatedAt`/`updatedBy`/`ownerBy`, or the filter names (ctime,
 * caid, ...). Cell values are passed on as received; converting them is the mapping's job.
 */
import type { WireRow, WorksheetField, WorksheetStructure } from '../types.ts';
import type { NormalisedRow } from '../types.ts';
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

/**
 * System fields with a place of their own in NormalisedRow, by every name they have
 * come under. `rank` decides when a row carries two spellings: the v3 name (0) wins over
 * the export's typo (1), the older export's name (2) and the filter name (3).
 */
// Maps, not object literals: a row key such as "__proto__" must not find Object.prototype.
const KNOWN_SYSTEM: ReadonlyMap<string, { target: Target; rank: number }> = new Map([
  ['_createdAt', { target: 'createdAt', rank: 0 }],
  ['_createAt', { target: 'createdAt', rank: 1 }],
  ['createdAt', { target: 'createdAt', rank: 2 }],
  ['ctime', { target: 'createdAt', rank: 3 }],
  ['_updatedAt', { target: 'updatedAt', rank: 0 }],
  ['updatedAt', { target: 'updatedAt', rank: 2 }],
  ['utime', { target: 'updatedAt', rank: 3 }],
  ['_createdBy', { target: 'createdBy', rank: 0 }],
  ['_createBy', { target: 'createdBy', rank: 1 }],
  ['createdBy', { target: 'createdBy', rank: 2 }],
  ['caid', { target: 'createdBy', rank: 3 }],
  ['_updatedBy', { target: 'updatedBy', rank: 0 }],
  ['updatedBy', { target: 'updatedBy', rank: 2 }],
  ['uaid', { target: 'updatedBy', rank: 3 }],
  ['_owner', { target: 'owner', rank: 0 }],
  ['ownerBy', { target: 'owner', rank: 2 }],
  ['ownerid', { target: 'owner', rank: 3 }],
]);

/**
 * System fields the sync does not rely on: a value that cannot be read is kept as
 * received under `system` instead of failing the row.
 */
const LENIENT: ReadonlySet<Target> = new Set(['updatedBy']);

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

const ROW_ID_KEYS: ReadonlySet<string> = new Set(['id', 'rowid']);

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
        `row has no id: expected a non-empty string in "id" or "rowid"; keys present: ${keys}`,
      );
    }
    const values: Record<string, unknown> = {};
    const system: Record<string, unknown> = {};
    const found: Partial<Record<Target, { value: unknown; rank: number; key: string }>> = {};

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
        // The better-ranked name wins when a row carries two spellings.
        const previous = found[known.target];
        if (previous === undefined || known.rank <= previous.rank)
          found[known.target] = { value, rank: known.rank, key };
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
        if (LENIENT.has(target)) {
          put(result.system, entry.key, entry.value);
          continue;
        }
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
