/**
 * The value transforms a mapping may ask for before its field's coercer runs (`trim`,
 * `map`, `trueValues` / `falseValues`, `decimal`), composed once per field into one
 * function, or none when the mapping asks for nothing: most fields pay no call per row.
 * Spreadsheets in other languages write "ja"/"nein", "1.234,50" and padded cells; these
 * turn such values into what the coercers read, so they are not dead-lettered row by row.
 */
import type { FieldMapping } from '../model/types.ts';
import { CoerceFailure } from './coerce-result.ts';

/** A source value before coercion: another value, or a failure naming what was expected. */
export type ValueTransform = (raw: unknown) => unknown;

// "1.234.567,89", "-12,5", "1234": points group thousands in threes, a comma marks decimals.
const COMMA_DECIMAL = /^[+-]?(?:\d{1,3}(?:\.\d{3})+|\d*)(?:,\d+)?$/;
const GROUP_SPACES = /[\s\u00a0\u202f']/g;

function commaDecimal(text: string): string | CoerceFailure {
  const compact = text.trim().replace(GROUP_SPACES, '');
  if (compact === '') return text;
  if (!COMMA_DECIMAL.test(compact) || !/\d/.test(compact))
    return new CoerceFailure('not a number with a decimal comma (decimal: ","): expected 1234,5 or 1.234,50');
  return compact.replaceAll('.', '').replace(',', '.');
}

/** `map` by exact text first, then by the text in lower case (`Ja` finds `ja`). */
function lookupIn(
  map: Readonly<Record<string, unknown>>,
): (text: string) => { hit: boolean; value: unknown } {
  const exact = new Map(Object.entries(map));
  const folded = new Map<string, unknown>();
  for (const [key, value] of exact) if (!folded.has(key.toLowerCase())) folded.set(key.toLowerCase(), value);
  return (text) => {
    if (exact.has(text)) return { hit: true, value: exact.get(text) };
    const lower = text.toLowerCase();
    return folded.has(lower) ? { hit: true, value: folded.get(lower) } : { hit: false, value: undefined };
  };
}

function words(list: readonly string[] | undefined): ReadonlySet<string> | undefined {
  return list === undefined ? undefined : new Set(list.map((w) => w.trim().toLowerCase()));
}

/**
 * The transform `mapping` asks for, or undefined when it asks for none. `decimal` applies
 * to `numeric` fields only (Number, Currency, Rating): the caller refuses it elsewhere.
 */
export function createValueTransform(mapping: FieldMapping, numeric: boolean): ValueTransform | undefined {
  const trim = mapping.trim === true;
  const lookup = mapping.map === undefined ? undefined : lookupIn(mapping.map);
  const trueWords = words(mapping.trueValues);
  const falseWords = words(mapping.falseValues);
  const decimalComma = numeric && mapping.decimal === ',';
  if (!trim && lookup === undefined && trueWords === undefined && falseWords === undefined && !decimalComma)
    return undefined;

  const one = (raw: unknown): unknown => {
    let value = raw;
    if (typeof value === 'number' || typeof value === 'bigint') {
      if (lookup === undefined) return value;
      const found = lookup(String(value));
      return found.hit ? found.value : value;
    }
    if (typeof value !== 'string') return value;
    if (trim) value = value.trim();
    const text = value as string;
    if (lookup !== undefined) {
      const found = lookup(trim ? text : text.trim());
      if (found.hit) return found.value;
    }
    if (trueWords !== undefined || falseWords !== undefined) {
      const word = text.trim().toLowerCase();
      if (trueWords?.has(word) === true) return true;
      if (falseWords?.has(word) === true) return false;
    }
    return decimalComma ? commaDecimal(text) : text;
  };
  return (raw) => {
    if (!Array.isArray(raw)) return one(raw);
    const out: unknown[] = [];
    for (const item of raw as unknown[]) {
      const value = one(item);
      if (value instanceof CoerceFailure) return value;
      out.push(value);
    }
    return out;
  };
}
