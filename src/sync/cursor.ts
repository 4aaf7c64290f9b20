/**
 * Whether incremental cursor value `a` is past `b`: numbers compare as numbers, dates as
 * instants, anything else as text (ISO timestamps sort as text).
 */
export function isLaterCursor(a: unknown, b: unknown): boolean {
  if (b === undefined || b === null) return true;
  if (typeof a === 'number' && typeof b === 'number') return a > b;
  if (a instanceof Date && b instanceof Date) return a.getTime() > b.getTime();
  return String(a instanceof Date ? a.toISOString() : a) > String(b instanceof Date ? b.toISOString() : b);
}
