/** Reading `"data.items"`-style paths of object keys, shared by the json and http sources. */

/** Splits a dot path; an empty or absent path is the root. */
export function splitDotPath(path: string | undefined): string[] {
  if (path === undefined || path === '') return [];
  return path.split('.');
}

/** The value at `path` in `value`, or `undefined` when a step is missing or not an object. */
export function getAtPath(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** `"an array"`, `"an object"`, `"a string"`...: for messages that say what was found. */
export function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (value === undefined) return 'missing';
  return `a ${typeof value}`;
}
