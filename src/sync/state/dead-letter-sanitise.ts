/**
 * Turns what the sync engine hands to the dead-letter store into what is safe to keep
 * in Redis: validated, with every single value capped so one huge row cannot bloat
 * Redis, nesting capped so the store's Lua scripts can always decode an entry (cjson
 * refuses deeper than 1000 levels), and credentials scrubbed from the message.
 */
import { ERROR_CATEGORIES } from '../../ground/errors.ts';
import type { ErrorCategory } from '../../ground/errors.ts';
import type { FieldValue } from '../../api/types.ts';
import type { SourceRecord } from '../model/types.ts';
import type { DeadLetterEntry, DeadLetterInput } from './dead-letter-entry.ts';

/** A single source or payload value larger than this (UTF-8 bytes) is cut with a marker. */
export const MAX_VALUE_BYTES = 10_240;
/** Messages are longer than a screen at this size already. */
export const MAX_MESSAGE_BYTES = 4_096;
/** Objects nested deeper than this are stored as (clipped) JSON text. */
export const MAX_DEPTH = 32;
/** Starts the text appended to whatever was cut. */
export const TRUNCATION_MARKER = '…[truncated';

/** Cuts `text` to at most `maxBytes` UTF-8 bytes (on a character boundary) and says how big it was. */
export function clipText(text: string, maxBytes: number): string {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= maxBytes) return text;
  let head = Buffer.from(text, 'utf8').subarray(0, maxBytes).toString('utf8');
  // A cut inside a multi-byte character decodes to U+FFFD: drop it.
  if (head.endsWith('\uFFFD')) head = head.slice(0, -1);
  return `${head}${TRUNCATION_MARKER} ${bytes} bytes]`;
}

function depthExceeds(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit === 0) return true;
  const children: unknown[] = Array.isArray(value) ? value : Object.values(value);
  return children.some((child) => depthExceeds(child, limit - 1));
}

function toJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  } catch {
    // Circular structures: keep a note rather than losing the whole dead letter.
    return JSON.stringify('[unserialisable value]');
  }
}

/** A JSON-safe copy of one value, capped in size and depth. */
export function capValue(value: unknown): unknown {
  if (typeof value === 'string') return clipText(value.toWellFormed(), MAX_VALUE_BYTES);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object' || value === null) return value;
  const json = toJson(value);
  if (json === undefined) return null;
  if (Buffer.byteLength(json, 'utf8') > MAX_VALUE_BYTES || depthExceeds(value, MAX_DEPTH)) {
    return clipText(json, MAX_VALUE_BYTES);
  }
  return wellFormedDeep(JSON.parse(json) as unknown);
}

/**
 * Replaces lone UTF-16 surrogates (bad input does contain them): JSON.stringify keeps
 * them as `\ud800` escapes, which the Lua cjson decoder rejects, and an entry the
 * remove script cannot decode could never be removed.
 */
function wellFormedDeep(value: unknown): unknown {
  if (typeof value === 'string') return value.toWellFormed();
  if (Array.isArray(value)) return value.map(wellFormedDeep);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.toWellFormed(), wellFormedDeep(v)]));
}

/** Removes credentials that error texts sometimes carry (connection URLs, bearer tokens). */
export function scrubSecrets(text: string): string {
  return text
    .replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi, '$1***@')
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g, '$1 ***');
}

function fail(id: string, what: string): never {
  throw new Error(`dead-letter store: entry "${id}": ${what}`);
}

function isCategory(value: unknown): value is ErrorCategory {
  return typeof value === 'string' && (ERROR_CATEGORIES as readonly string[]).includes(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function sanitiseSource(id: string, source: SourceRecord): SourceRecord {
  if (typeof source !== 'object' || source === null)
    fail(id, 'source must be an object with data and position');
  const { data, position, cursor } = source;
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    fail(id, 'source.data must be an object');
  if (typeof position !== 'object' || position === null || !isCount(position.index)) {
    fail(id, 'source.position.index must be a whole number >= 0');
  }
  const cappedData: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) cappedData[key.toWellFormed()] = capValue(value);
  const out: SourceRecord = { data: cappedData, position: { index: position.index } };
  if (position.line !== undefined) out.position.line = position.line;
  if (position.page !== undefined)
    out.position.page =
      typeof position.page === 'string' ? clipText(position.page.toWellFormed(), 1024) : position.page;
  if (position.id !== undefined) out.position.id = clipText(String(position.id).toWellFormed(), 1024);
  if (position.idColumn !== undefined)
    out.position.idColumn = clipText(String(position.idColumn).toWellFormed(), 256);
  if (cursor !== undefined) out.cursor = capValue(cursor);
  return out;
}

function sanitisePayload(id: string, payload: FieldValue[]): FieldValue[] {
  if (!Array.isArray(payload)) fail(id, 'payload must be an array of {id, value}');
  return payload.map((fv, i) => {
    if (typeof fv !== 'object' || fv === null || typeof fv.id !== 'string')
      fail(id, `payload[${i}].id must be a string`);
    const out: FieldValue = { id: fv.id.toWellFormed(), value: capValue(fv.value) };
    if (fv.type !== undefined) out.type = fv.type;
    return out;
  });
}

function parseCreatedAt(
  id: string,
  createdAt: string | undefined,
  now: () => number,
): { iso: string; ms: number } {
  if (createdAt === undefined) {
    const ms = now();
    return { iso: new Date(ms).toISOString(), ms };
  }
  const ms = Date.parse(createdAt);
  if (typeof createdAt !== 'string' || Number.isNaN(ms))
    fail(id, `createdAt must be an ISO timestamp, got ${JSON.stringify(createdAt)}`);
  return { iso: new Date(ms).toISOString(), ms };
}

/**
 * Validates one entry and returns it as stored. The id must be `${runId}:${index}`:
 * that is what makes re-processing a batch after a crash add nothing twice.
 */
export function sanitiseEntry(
  input: DeadLetterInput,
  now: () => number,
): { entry: DeadLetterEntry; score: number } {
  const id = typeof input.id === 'string' ? input.id : String(input.id);
  // Ids, jobs and runs name Redis keys: refuse what would not survive UTF-8 unchanged.
  if (!id.isWellFormed()) fail(id.toWellFormed(), 'id must be valid Unicode text');
  if (typeof input.job !== 'string' || input.job === '' || !input.job.isWellFormed()) {
    fail(id, 'job must be a non-empty string of valid Unicode text');
  }
  if (typeof input.runId !== 'string' || input.runId === '' || !input.runId.isWellFormed()) {
    fail(id, 'runId must be a non-empty string of valid Unicode text');
  }
  if (!isCategory(input.category)) {
    fail(id, `category ${JSON.stringify(input.category)} is not one of ${ERROR_CATEGORIES.join(', ')}`);
  }
  if (input.errorCode !== undefined && !Number.isInteger(input.errorCode))
    fail(id, 'errorCode must be a whole number');
  if (typeof input.message !== 'string') fail(id, 'message must be a string');
  if (input.field !== undefined && typeof input.field !== 'string') fail(id, 'field must be a string');
  if (!isCount(input.attempts)) fail(id, 'attempts must be a whole number >= 0');
  const source = sanitiseSource(id, input.source);
  const expected = `${input.runId}:${source.position.index}`;
  if (id !== expected) fail(id, `id must be "<runId>:<source.position.index>", here "${expected}"`);
  const created = parseCreatedAt(id, input.createdAt, now);

  const entry: DeadLetterEntry = {
    id,
    job: input.job,
    runId: input.runId,
    category: input.category,
    message: clipText(scrubSecrets(input.message.toWellFormed()), MAX_MESSAGE_BYTES),
    source,
    attempts: input.attempts,
    createdAt: created.iso,
  };
  if (input.errorCode !== undefined) entry.errorCode = input.errorCode;
  if (input.field !== undefined) entry.field = clipText(input.field.toWellFormed(), 1024);
  if (typeof input.key === 'string') entry.key = clipText(input.key.toWellFormed(), 1024);
  if (input.payload !== undefined) entry.payload = sanitisePayload(id, input.payload);
  return { entry, score: created.ms };
}
