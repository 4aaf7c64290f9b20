/**
 * Tolerant readers for values whose wire type the platform's export contradicts
 * (platform-shapes §4 [C]: option `index`/`isDeleted` are typed string in the schema and
 * integer/boolean in every example; §5: `total` is a string in the schema). Each returns
 * undefined for what it cannot read, so that a caller decides whether that is fatal.
 */

/** A plain JSON object, or undefined. */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** `true`/`false`, `"true"`/`"false"` (any case), `1`/`0` and `"1"`/`"0"`. */
export function readLooseBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value === 1 ? true : value === 0 ? false : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toLowerCase();
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  return undefined;
}

/** An integer, or an integer written as a string (`"3"`, `" 12 "`). */
export function readLooseInteger(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
  if (typeof value !== 'string' || !/^\s*-?\d+\s*$/.test(value)) return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A non-empty string, or undefined. */
export function readId(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** The first of `keys` that holds a non-empty string id, with the key it was found under. */
export function firstId(
  record: Record<string, unknown>,
  keys: readonly string[],
): { id: string; key: string } | undefined {
  for (const key of keys) {
    const id = readId(record[key]);
    if (id !== undefined) return { id, key };
  }
  return undefined;
}
