/**
 * A row's log. Most rows of a bulk import are never changed again, so the create entry
 * is only materialised at the first later change: until then the row's values object is
 * the one it was created with (values are replaced, never mutated), and the entry can be
 * made from it. This saves one entry and one array per row.
 */
import type { RowLogEntry, StoredRow } from '../state/records.ts';

function createEntry(row: StoredRow): RowLogEntry {
  return { action: 'create', at: row.createdAt, by: row.createdBy, changes: undefined, values: row.values };
}

/** Every entry, oldest first. */
export function rowLog(row: StoredRow): readonly RowLogEntry[] {
  return row.logs ?? [createEntry(row)];
}

/** Records a change; call it before the row's values are replaced. */
export function appendLog(row: StoredRow, entry: RowLogEntry): void {
  row.logs ??= [createEntry(row)];
  row.logs.push(entry);
}
