import { RowShapeError } from './row-errors.ts';

/** A user reference as NormalisedRow holds it. */
export interface UserRefValue {
  accountId: string;
  fullname?: string;
}

const EXPECTED =
  'expected {accountId, fullname} (or {id, name}), a JSON string of one, or a plain account id';

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  return value === null ? 'null' : `a ${typeof value}`;
}

/**
 * Reads a creator / modifier / owner reference in the forms the platform has used
 * (platform notes §5): `{accountId, fullname}` (spec §2; `{id, name}` too), the same object as a JSON
 * string, or a bare account id (flat rows with the earlier names caid/uaid/ownerid).
 * A one-element array is unwrapped, as member cells come as arrays. Empty values read
 * as undefined; anything else throws a RowShapeError with what was found and what is allowed.
 */
export function readUserRef(value: unknown): UserRefValue | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (Array.isArray(value)) {
    if (value.length === 0) return undefined;
    if (value.length === 1) return readUserRef(value[0]);
    throw new RowShapeError(`${describe(value)} is not one user reference; ${EXPECTED}`);
  }
  if (typeof value === 'string') {
    const text = value.trim();
    if (!text.startsWith('{') && !text.startsWith('[')) return { accountId: text };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new RowShapeError(`${describe(value)} looks like JSON but does not parse; ${EXPECTED}`);
    }
    return readUserRef(parsed);
  }
  if (typeof value === 'object') {
    // The row-list example writes `id` where the schema has `accountId`, and the users
    // lookup `name` for `fullname` (platform-shapes §5, §9 [C]): read both.
    const record = value as { accountId?: unknown; id?: unknown; fullname?: unknown; name?: unknown };
    const accountId = record.accountId ?? record.id;
    const fullname = record.fullname ?? record.name;
    if (accountId === '') return undefined;
    if (typeof accountId !== 'string')
      throw new RowShapeError(`an object without a string accountId (or id); ${EXPECTED}`);
    return typeof fullname === 'string' ? { accountId, fullname } : { accountId };
  }
  throw new RowShapeError(`${describe(value)} is not a user reference; ${EXPECTED}`);
}
