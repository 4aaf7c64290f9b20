/**
 * What the JSON array scanner (json-array-scanner.ts) says when the document's shape
 * does not lead to an array at the path: each message names the path and what was found.
 */

/** Where a value sits relative to the path: on the way to the target array, or the target itself. */
type OnPath = 'along' | 'target';

function describePath(path: readonly string[]): string {
  return path.length === 0 ? 'the document' : `itemsPath "${path.join('.')}"`;
}

/** Why a container opened by `open` at `depth` cannot be on the path, or undefined when it can. */
export function containerProblem(
  place: OnPath | 'off',
  open: '{' | '[',
  path: readonly string[],
  depth: number,
): string | undefined {
  if (place === 'target' && open === '{') {
    return path.length === 0
      ? 'the document is an object, not an array; set itemsPath to the array inside it'
      : `${describePath(path)} is an object, expected an array of objects`;
  }
  if (place === 'along' && open === '[')
    return `${describePath(path)} cannot be followed: "${path.slice(0, depth).join('.') || 'the document'}" is an array, expected an object`;
  return undefined;
}

/** Why a scalar starting with `c` cannot be on the path. */
export function scalarProblem(place: OnPath, c: string, path: readonly string[]): string {
  const found = c === '"' ? 'string' : 'scalar';
  return place === 'target'
    ? `${describePath(path)} is a ${found}, expected an array of objects`
    : `${describePath(path)} cannot be followed: found a ${found} where an object was expected`;
}

/** The document ended without an array at the path. */
export function missingArrayProblem(path: readonly string[]): string {
  return path.length === 0
    ? 'the document is not an array; set itemsPath to the array inside it'
    : `${describePath(path)} not found in the document`;
}
