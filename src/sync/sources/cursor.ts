import { compareCursor } from './cursor-filter.ts';

/**
 * Whether incremental cursor value `a` is past `b`, in the order the sources filter by
 * (`compareCursor`): numbers and numeric text as numbers, dates and ISO-like text as
 * instants, anything else as text. The same order matters: text files give numbers as
 * text, and "999" is past "3000" as text, so a run would save a cursor below its last
 * record and the next run would read (and an append would write) those records again.
 */
export function isLaterCursor(a: unknown, b: unknown): boolean {
  if (b === undefined || b === null) return true;
  return compareCursor(cursorText(a), cursorText(b)) > 0;
}

function cursorText(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint') return value.toString();
  // Numbers and booleans as their digits and words, objects and null as JSON; no value
  // (undefined) as nothing, which is past nothing.
  return JSON.stringify(value) ?? '';
}
