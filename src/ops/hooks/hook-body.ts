/**
 * The body of a hook call: a hint naming rows (`rowId`/`rowIds` for a worksheet source,
 * `key`/`keys` for a SQL source with keyColumn), or for sources that cannot be read by
 * id the record itself, or an array of records.
 */
import type { HookHint } from '../../queue/hook-inbox.ts';

/** Largest body accepted. */
export const MAX_HOOK_BODY_BYTES = 1024 * 1024;
/** Longest id or key accepted (row ids are 24 hex digits; keys are the source's). */
const MAX_ID_LENGTH = 512;

/** A body refused: the 400 answer's reason. */
export class HookBodyError extends Error {
  override name = 'HookBodyError';
}

const KEYS = {
  rowId: { one: 'rowId', many: 'rowIds', what: 'row id' },
  key: { one: 'key', many: 'keys', what: 'key' },
} as const;

function idOf(value: unknown, field: string, what: string): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string' || value.trim() === '')
    throw new HookBodyError(`${field} must be a ${what} (text or number); got ${describe(value)}`);
  if (value.length > MAX_ID_LENGTH)
    throw new HookBodyError(`${field} is longer than ${MAX_ID_LENGTH} characters`);
  return value;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value === '' ? 'an empty text' : 'a text';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/**
 * The hint of a body, as tokens for the inbox. `kind` is the job's (hookHintKind);
 * `deliveryId` names the records a body carries.
 */
export function parseHookBody(raw: Buffer, kind: 'rowId' | 'key' | 'record', deliveryId: string): HookHint {
  if (raw.length > MAX_HOOK_BODY_BYTES) throw new HookBodyError('the body is over 1 MiB');
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new HookBodyError('the body is not JSON');
  }
  if (kind === 'record') {
    const records = Array.isArray(body) ? (body as unknown[]) : [body];
    if (records.length === 0) throw new HookBodyError('the body is an empty array: no record to write');
    return {
      tokens: records.map((record, i) => {
        if (typeof record !== 'object' || record === null || Array.isArray(record))
          throw new HookBodyError(
            `${Array.isArray(body) ? `record ${i}` : 'the body'} must be a JSON object (the record, mapped like the source's own); got ${describe(record)}`,
          );
        return { token: `r:${deliveryId}:${i}`, data: JSON.stringify(record) };
      }),
    };
  }
  const names = KEYS[kind];
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new HookBodyError(`the body must be an object: {"${names.one}": ...} or {"${names.many}": [...]}`);
  const fields = Object.keys(body);
  const unknown = fields.filter((f) => f !== names.one && f !== names.many);
  if (unknown.length > 0)
    throw new HookBodyError(
      `unknown key${unknown.length === 1 ? '' : 's'} ${unknown.map((f) => `"${f.slice(0, 40)}"`).join(', ')}: this job takes "${names.one}" or "${names.many}"`,
    );
  const record = body as Record<string, unknown>;
  const ids: string[] = [];
  if (names.one in record) ids.push(idOf(record[names.one], names.one, names.what));
  if (names.many in record) {
    const many = record[names.many];
    if (!Array.isArray(many))
      throw new HookBodyError(`${names.many} must be an array; got ${describe(many)}`);
    many.forEach((value: unknown, i) => ids.push(idOf(value, `${names.many}[${i}]`, names.what)));
  }
  if (ids.length === 0)
    throw new HookBodyError(`name a row: {"${names.one}": ...} or {"${names.many}": [...]}`);
  return { tokens: [...new Set(ids)].map((id) => ({ token: `i:${id}` })) };
}
