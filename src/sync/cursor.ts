/**
 * Whether incremental cursor value `a` is past `b`: numbers compare as numbers, dates as
 * instants, anything else as text (ISO timestamps sort as text).
 */
export function isLaterCursor(a: unknown, b: unknown): boolean {
  if (b === undefined || b === null) return true;
  if (typeof a === 'number' && typeof b === 'number') return a > b;
  if (a instanceof Date && b instanceof Date) return a.getTime() > b.getTime();
  return cursorText(a) > cursorText(b);
}

function cursorText(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return String(value);
  return JSON.stringify(value) ?? '';
}
