/**
 * Password hashes of dashboard users: `scrypt$<salt>$<hash>` (base64url, no `:`, `,` or
 * `$` inside, so a list `alice:scrypt$..,bob:scrypt$..` splits unambiguously). scrypt
 * because node has it built in and it is memory-hard; the parameters are fixed here,
 * so a hash never carries attacker-chosen cost values.
 */
import { randomBytes, scrypt, scryptSync, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: string,
  keylen: number,
  options: object,
) => Promise<Buffer>;

const KEY_LENGTH = 32;
const PARAMS = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const FORMAT = /^scrypt\$([A-Za-z0-9_-]{16,})\$([A-Za-z0-9_-]{43})$/;

/** `scrypt$<salt>$<hash>` of a password, with a fresh random salt. */
export function hashPassword(password: string): string {
  const salt = randomBytes(16).toString('base64url');
  const hash = scryptSync(password.normalize('NFC'), salt, KEY_LENGTH, PARAMS).toString('base64url');
  return `scrypt$${salt}$${hash}`;
}

/** Whether `encoded` has the shape {@link hashPassword} writes. */
export function isPasswordHash(encoded: string): boolean {
  return FORMAT.test(encoded);
}

/**
 * Checks a password against its hash; the comparison takes the same time whatever
 * differs. Asynchronous: scrypt runs on libuv's pool, so a flood of wrong logins does not
 * stall the event loop (a worker serving `--dashboard` keeps processing jobs).
 */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const match = FORMAT.exec(encoded);
  if (match === null) return false;
  const [, salt = '', hash = ''] = match;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptAsync(password.normalize('NFC'), salt, KEY_LENGTH, PARAMS);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
