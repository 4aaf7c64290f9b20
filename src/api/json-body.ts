/** Arrays this long or longer are written {@link SLICE} elements at a time. */
const PIECEWISE_FROM = 16;
const SLICE = 64;

/**
 * A request's JSON body, written to bytes when the operation is built: `JSON.stringify`
 * gives the same text.
 *
 * Why bytes, written early: a batch of 1,000 rows is 300 to 600 KB of JSON. As one string
 * it lands in V8's large-object space, which only a full collection frees, and the row
 * objects it was made from stay reachable from the operation for as long as the request
 * and its retries take, long enough to be promoted to the old generation. Both set the
 * worker's peak memory. Written here, each array element is a short string that dies at
 * once, the bytes live outside the JavaScript heap, and the objects can go.
 */
export class JsonBody {
  readonly bytes: Buffer;

  constructor(value: unknown) {
    const parts: string[] = [];
    writeJson(value, parts);
    let size = 0;
    for (const part of parts) size += Buffer.byteLength(part);
    const bytes = Buffer.allocUnsafe(size);
    let at = 0;
    for (const part of parts) at += bytes.write(part, at);
    this.bytes = bytes;
  }

  /** The JSON text (for tests and messages; the transport sends {@link bytes}). */
  toString(): string {
    return this.bytes.toString();
  }
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value) as unknown;
  return (
    (proto === Object.prototype || proto === null) &&
    typeof (value as { toJSON?: unknown }).toJSON !== 'function'
  );
}

/**
 * Appends the JSON text of `value` to `parts`: plain objects a property at a time, long
 * arrays a slice of elements at a time (each element whole), anything else (short arrays, leaves,
 * objects with `toJSON` or of a class) whole. Every piece is `JSON.stringify`'s, so the
 * text is the one it gives for the whole (`undefined`, functions and symbols are left
 * out of objects and written `null` in arrays, as it does).
 */
function writeJson(value: unknown, parts: string[]): void {
  if (typeof value !== 'object' || value === null) {
    parts.push(JSON.stringify(value) ?? 'null');
    return;
  }
  if (Array.isArray(value)) {
    if (value.length < PIECEWISE_FROM) {
      parts.push(JSON.stringify(value));
      return;
    }
    // A slice of elements at a time, each slice's text without its brackets (a slice of
    // a string shares its characters): rows of a batch in pieces of some tens of KB.
    parts.push('[');
    for (let at = 0; at < value.length; at += SLICE) {
      if (at > 0) parts.push(',');
      parts.push(JSON.stringify(value.slice(at, at + SLICE)).slice(1, -1));
    }
    parts.push(']');
    return;
  }
  if (!isPlainObject(value)) {
    parts.push(JSON.stringify(value));
    return;
  }
  parts.push('{');
  let first = true;
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    parts.push(first ? `${JSON.stringify(key)}:` : `,${JSON.stringify(key)}:`);
    first = false;
    writeJson(item, parts);
  }
  parts.push('}');
}
