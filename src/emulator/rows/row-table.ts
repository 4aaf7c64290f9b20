/**
 * Storage of one worksheet's rows: O(1) lookup by id, creation order for the default
 * sort, and a value index per unique field so duplicate checks never scan the table
 * (a 1,000,000-row import runs against this).
 */
import type { RowTable, StoredRow } from '../state/records.ts';

export function createRowTable(): RowTable {
  return {
    byId: new Map(),
    order: [],
    purgedInOrder: 0,
    live: 0,
    nextAutoId: 1,
    unique: new Map(),
    queryCache: undefined,
  };
}

/** The index key of a value in a unique field; undefined for empty values (never duplicates). */
export function uniqueKey(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (Array.isArray(value)) return value.length === 0 ? undefined : JSON.stringify(value);
  if (typeof value === 'object') return JSON.stringify(value);
  if (typeof value === 'string') return value.trim();
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
}

/** The live row of a table, or undefined when it does not exist or is soft-deleted. */
export function liveRow(table: RowTable, rowId: string): StoredRow | undefined {
  const row = table.byId.get(rowId);
  return row === undefined || row.deleted ? undefined : row;
}

/** Id of the live row holding `key` in a unique field. */
export function uniqueHolder(table: RowTable, fieldId: string, key: string): string | undefined {
  return table.unique.get(fieldId)?.get(key);
}

function indexValues(table: RowTable, row: StoredRow, fieldIds: readonly string[], add: boolean): void {
  for (const fieldId of fieldIds) {
    const key = uniqueKey(row.values[fieldId]);
    if (key === undefined) continue;
    let index = table.unique.get(fieldId);
    if (index === undefined) {
      index = new Map();
      table.unique.set(fieldId, index);
    }
    if (add) index.set(key, row.id);
    else if (index.get(key) === row.id) index.delete(key);
  }
}

export function insertRow(table: RowTable, row: StoredRow, uniqueFieldIds: readonly string[]): void {
  table.byId.set(row.id, row);
  table.order.push(row);
  table.live += 1;
  indexValues(table, row, uniqueFieldIds, true);
}

/** Replaces a row's values object (old objects stay referenced by the create log). */
export function replaceValues(
  table: RowTable,
  row: StoredRow,
  values: Record<string, unknown>,
  uniqueFieldIds: readonly string[],
): void {
  indexValues(table, row, uniqueFieldIds, false);
  row.values = values;
  indexValues(table, row, uniqueFieldIds, true);
}

/** Moves a row to the recycle bin: it frees its unique values and disappears from reads. */
export function softDelete(table: RowTable, row: StoredRow, uniqueFieldIds: readonly string[]): void {
  indexValues(table, row, uniqueFieldIds, false);
  row.deleted = true;
  table.live -= 1;
}

export function purgeRow(table: RowTable, row: StoredRow, uniqueFieldIds: readonly string[]): void {
  if (!row.deleted) softDelete(table, row, uniqueFieldIds);
  table.byId.delete(row.id);
  row.purged = true;
  table.purgedInOrder += 1;
  // Compacting only when half the order array is dead keeps purges amortised O(1).
  if (table.purgedInOrder > 1024 && table.purgedInOrder * 2 > table.order.length) {
    table.order = table.order.filter((r) => !r.purged);
    table.purgedInOrder = 0;
  }
}

/** Rebuilds a unique index (a field became unique): returns the first duplicated key found. */
export function rebuildUniqueIndex(table: RowTable, fieldId: string): string | undefined {
  const index = new Map<string, string>();
  for (const row of table.order) {
    if (row.deleted) continue;
    const key = uniqueKey(row.values[fieldId]);
    if (key === undefined) continue;
    if (index.has(key)) return key;
    index.set(key, row.id);
  }
  table.unique.set(fieldId, index);
  return undefined;
}
