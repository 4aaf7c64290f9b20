import type { WireRow } from '../types.ts';

/**
 * The id of a row in either wire shape: `id` (the public platform's key, platform-shapes
 * §5 [C]), else `rowid` (the older export's, still read by official sample code [U]).
 * Undefined when the row carries no usable id.
 */
export function wireRowId(row: WireRow): string | undefined {
  const record = row as Record<string, unknown>;
  for (const key of ['id', 'rowid']) {
    const value = record[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}
