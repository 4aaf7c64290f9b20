/**
 * Readers for request bodies: each checks one value and, when it is wrong, throws
 * 10001 naming where the value sits (`rows[3].fields[0].id`) and what is allowed.
 */
import { paramError } from './emulator-error.ts';

export type Json = Record<string, unknown>;

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value.length > 40 ? `"${value.slice(0, 40)}…"` : `"${value}"`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${value}`;
  return typeof value;
}

export function asObject(value: unknown, where: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw paramError(`${where} must be a JSON object, got ${describe(value)}`);
  }
  return value as Json;
}

/** The body as an object; a missing body reads as `{}`. */
export function bodyObject(value: unknown): Json {
  return value === undefined ? {} : asObject(value, 'request body');
}

export function asArray(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw paramError(`${where} must be an array, got ${describe(value)}`);
  return value;
}

export function optionalArray(value: unknown, where: string): unknown[] {
  return value === undefined || value === null ? [] : asArray(value, where);
}

export function asString(value: unknown, where: string): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw paramError(`${where} must be a non-empty string, got ${describe(value)}`);
  return value;
}

export function optionalString(value: unknown, where: string, fallback = ''): string {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string') throw paramError(`${where} must be a string, got ${describe(value)}`);
  return value;
}

export function optionalBoolean(value: unknown, where: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') throw paramError(`${where} must be true or false, got ${describe(value)}`);
  return value;
}

/** An integer from a body value or a query string; undefined when absent. */
export function optionalInteger(value: unknown, where: string): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n))
    throw paramError(`${where} must be an integer, got ${describe(value)}`);
  return n;
}

export function stringList(value: unknown, where: string): string[] {
  return asArray(value, where).map((item, i) => asString(item, `${where}[${i}]`));
}
