/**
 * How a filter condition's value is read before it is compared: the operand forms of
 * platform notes §3 (a string or an array of them, a number, `[min, max]`, one value sent
 * as a one-element array). Shared by every field family's conditions, so a malformed
 * operand gets the same 10001 message whichever family it was aimed at.
 */
import { paramError } from '../emulator-error.ts';
import { describe } from '../input.ts';

/** The operand as strings: numbers and booleans are taken as their text. */
export function scalarList(value: unknown, label: string, op: string): string[] {
  const items = Array.isArray(value) ? value : [value];
  return items.map((item) => {
    if (typeof item === 'string') return item;
    if (typeof item === 'number' || typeof item === 'boolean') return String(item);
    throw paramError(
      `filter on ${label}: operator "${op}" takes a string or an array of strings, got ${describe(item)}`,
    );
  });
}

export function toNumber(value: unknown, label: string, op: string): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n))
    throw paramError(`filter on ${label}: operator "${op}" takes a number, got ${describe(value)}`);
  return n;
}

export function range(value: unknown, label: string, op: string): [unknown, unknown] {
  if (!Array.isArray(value) || value.length !== 2)
    throw paramError(`filter on ${label}: operator "${op}" takes [min, max], got ${describe(value)}`);
  return [value[0], value[1]];
}

/**
 * A comparison's one value: the platform's generator and guides send even a number as a
 * one-element array of strings (`ge ["10000"]`, platform-shapes §8 [L]).
 */
export function oneValue(value: unknown, label: string, op: string): unknown {
  if (!Array.isArray(value)) return value;
  if (value.length !== 1)
    throw paramError(`filter on ${label}: operator "${op}" takes one value, got ${describe(value)}`);
  return value[0];
}
