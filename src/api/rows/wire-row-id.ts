import type { WireRow } from '../types.ts';

/**
 * The id of a row in either wire shape: the spec's `id`, or `rowid` (preferred) / `id`
 * of the flat shape (platform notes §5). Undefined when the row carries no usable id.
 */
export function wireRowId(row: WireRow): string | undefined {
  const record = row as Record<string, unknown>;
  for (const key of ['rowid', 'id']) {
    const value = record[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}
