/**
 * The bytes of the compact key index (compact-key-index.ts): a key's digest, and an
 * entry (row id + content hash) in as few bytes as the platform's forms allow.
 */
import { hash } from 'node:crypto';
import type { IndexEntry } from './key-index-types.ts';

/**
 * Bytes of a key's SHA-1 kept as its field. The first four also place it in a bucket
 * (compact-key-index-scripts.ts), so the digest is the whole identity: 64 bits, where a
 * new key meets an existing one's digest with probability (keys in the index) / 2^64.
 */
export const DIGEST_BYTES = 8;

/** A key's field in the compact index. */
export function keyDigest(key: string): Buffer {
  return hash('sha1', key, 'buffer').subarray(0, DIGEST_BYTES);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Bytes of the content hash rowbridge writes (map-record.ts: 6 bytes of SHA-1, base64url). */
const HASH_BYTES = 6;

function hashBytes(text: string): Buffer | undefined {
  if (text.length !== 8) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.length === HASH_BYTES && bytes.toString('base64url') === text ? bytes : undefined;
}

function uuidBytes(rowId: string): Buffer | undefined {
  return UUID.test(rowId) ? Buffer.from(rowId.replaceAll('-', ''), 'hex') : undefined;
}

function uuidText(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * An entry as bytes. The platform's row ids are lowercase UUIDs and rowbridge's content
 * hashes 6 bytes of base64url, so nearly every entry is 22 bytes (UUID + hash) or 16 (UUID,
 * hash unknown) and needs no tag: the length says which. Anything else (a deployment
 * with other ids, a hash of another form) is `rowId NUL hash`, padded with a NUL when it
 * would be 16 or 22 bytes long, so a length never lies.
 */
export function encodeEntry(entry: IndexEntry): Buffer {
  const id = uuidBytes(entry.rowId);
  if (id !== undefined) {
    if (entry.hash === '') return id;
    const h = hashBytes(entry.hash);
    if (h !== undefined) return Buffer.concat([id, h]);
  }
  if (entry.rowId.includes('\0') || entry.hash.includes('\0'))
    throw new RangeError(
      `key index: a row id or hash with a NUL character cannot be stored (row ${entry.rowId})`,
    );
  const general = Buffer.from(`${entry.rowId}\0${entry.hash}`, 'utf8');
  return general.length === 16 || general.length === 22 ? Buffer.concat([general, Buffer.alloc(1)]) : general;
}

/** The entry {@link encodeEntry} wrote. */
export function decodeEntry(bytes: Buffer): IndexEntry {
  if (bytes.length === 22)
    return { rowId: uuidText(bytes.subarray(0, 16)), hash: bytes.subarray(16).toString('base64url') };
  if (bytes.length === 16) return { rowId: uuidText(bytes), hash: '' };
  const text = bytes.toString('utf8');
  const nul = text.indexOf('\0');
  return { rowId: text.slice(0, nul), hash: text.slice(nul + 1).replace(/\0+$/, '') };
}
