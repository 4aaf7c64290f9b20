/**
 * Whether a source value counts as empty: undefined, null, "" and [] always; a
 * whitespace-only string too when `blankIsEmpty` (CSV exports pad numbers and dates
 * with spaces; for text fields spaces are content and stay).
 */
export function isEmptyValue(raw: unknown, blankIsEmpty: boolean): boolean {
  if (raw === undefined || raw === null || raw === '') return true;
  if (typeof raw === 'string') return blankIsEmpty && raw.trim() === '';
  return Array.isArray(raw) && raw.length === 0;
}
