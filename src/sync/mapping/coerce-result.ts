/**
 * What a coercer returns besides a plain value. Coercion runs once per field per row on
 * imports of a million rows, so success is the bare value (no wrapper allocated) and
 * only the rarer outcomes are objects, told apart with `instanceof`.
 */

/** The value cannot be written to the field; `reason` says why and what is allowed. */
export class CoerceFailure {
  readonly reason: string;
  constructor(reason: string) {
    this.reason = reason;
  }
}

/**
 * The value needs a lookup before it can be written (members by name/email, departments
 * by name, relations by the related worksheet's key). `values` are the canonical lookup
 * inputs, deduplicated, in source order.
 */
export class PendingReference {
  readonly values: readonly string[];
  constructor(values: readonly string[]) {
    this.values = values;
  }
}

/** A value that must be sent with a field-value `type` (select texts the platform may create). */
export class TypedValue {
  readonly value: unknown;
  readonly type: string;
  constructor(value: unknown, type: string) {
    this.value = value;
    this.type = type;
  }
}

/** Turns a raw, non-empty source value into the platform's write format. */
export type Coercer = (raw: unknown) => unknown;

/** Describes a source value in an error without dumping a huge cell or object. */
export function describeValue(raw: unknown, max = 200): string {
  let text: string;
  if (typeof raw === 'string') text = raw;
  else if (raw instanceof Date) text = Number.isNaN(raw.getTime()) ? 'Invalid Date' : raw.toISOString();
  else if (typeof raw === 'object' && raw !== null) {
    try {
      text = JSON.stringify(raw);
    } catch {
      text = Object.prototype.toString.call(raw);
    }
  } else text = String(raw);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Short name of a value's kind for reasons ("got an object"). */
export function kindOf(raw: unknown): string {
  if (raw === null) return 'null';
  if (Array.isArray(raw)) return 'an array';
  if (raw instanceof Date) return 'a date';
  const t = typeof raw;
  return t === 'object' ? 'an object' : `a ${t}`;
}
