/**
 * Coercion of the scalar families into the platform's write values (platform-shapes §7):
 * text-like fields take strings, Number/Currency JSON numbers, Rating a digit string
 * (`"4"` [U], CLI seed guide), Checkbox `"1"`/`"0"` (not JSON booleans [L], FRONT and
 * row-create.json), Region a code string.
 */
import { CoerceFailure, type Coercer, kindOf } from './coerce-result.ts';

export type TextLikeType = 'Text' | 'RichText' | 'Certificate' | 'Email' | 'PhoneNumber' | 'LandlinePhone';
export type NumericType = 'Number' | 'Currency';

// Plain decimals, optionally grouped by "," in threes. "1,5" is not accepted: it is a
// decimal comma in half the world and a typo in the other half.
const DECIMAL = /^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?$/;
const HAS_DIGIT = /\d/;
const EMAIL = /^[^\s@]+@[^\s@]+$/;
const PHONE = /^[+\d\s().\-/]+(?:\s*(?:x|ext\.?|#)\s*\d+)?$/i;

const TRUE_WORDS: ReadonlySet<string> = new Set(['true', '1', 'yes', 'y']);
const FALSE_WORDS: ReadonlySet<string> = new Set(['false', '0', 'no', 'n']);

function asText(raw: unknown): string | CoerceFailure {
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'number')
    return Number.isFinite(raw) ? String(raw) : new CoerceFailure(`expected text, got ${raw}`);
  if (typeof raw === 'bigint' || typeof raw === 'boolean') return String(raw);
  if (raw instanceof Date && !Number.isNaN(raw.getTime())) return raw.toISOString();
  return new CoerceFailure(`expected text (a string, number or boolean), got ${kindOf(raw)}`);
}

export function createTextCoercer(type: TextLikeType): Coercer {
  if (type === 'Email') {
    return (raw) => {
      const text = asText(raw);
      if (text instanceof CoerceFailure) return text;
      const email = text.trim();
      return EMAIL.test(email) ? email : new CoerceFailure('not an email address: expected name@domain');
    };
  }
  if (type === 'PhoneNumber' || type === 'LandlinePhone') {
    return (raw) => {
      const text = asText(raw);
      if (text instanceof CoerceFailure) return text;
      const phone = text.trim();
      return PHONE.test(phone) && HAS_DIGIT.test(phone)
        ? phone
        : new CoerceFailure(
            'not a phone number: expected digits with optional +, spaces, dashes, dots, brackets, ext',
          );
    };
  }
  return asText;
}

/**
 * `-12.50`, `7`: a sign, digits, a point and digits, as most numbers in a file are, told
 * without the two regexes below (a quarter of a million-row import's number coercion).
 * Everything this accepts, they accept too.
 */
function isPlainDecimal(text: string): boolean {
  const isDigit = (k: number): boolean => text.charCodeAt(k) >= 48 && text.charCodeAt(k) <= 57;
  let k = text.startsWith('+') || text.startsWith('-') ? 1 : 0;
  const start = k;
  while (k < text.length && isDigit(k)) k += 1;
  if (k === start) return false;
  if (k === text.length) return true;
  if (text[k] !== '.') return false;
  const point = (k += 1);
  while (k < text.length && isDigit(k)) k += 1;
  return k > point && k === text.length;
}

/** Number and Currency: a finite JSON number (`125000.5`). */
export function createNumberCoercer(): Coercer {
  return (raw) => {
    const n = parseNumber(raw);
    if (typeof n !== 'number') return n;
    if (!Number.isFinite(n)) return new CoerceFailure(`expected a finite number, got ${n}`);
    return n === 0 ? 0 : n; // -0 and 0 must hash alike
  };
}

/** Rating: whole stars from 0 to the field's `max`, written as a digit string. */
export function createRatingCoercer(max: number | undefined): Coercer {
  const top = max !== undefined && Number.isInteger(max) && max > 0 ? max : undefined;
  const range = top === undefined ? '0 or more' : `0 to ${top}`;
  return (raw) => {
    const n = parseNumber(raw);
    if (typeof n !== 'number') return n;
    if (!Number.isInteger(n) || n < 0 || (top !== undefined && n > top)) {
      return new CoerceFailure(`a rating is a whole number of stars, ${range}; got ${n}`);
    }
    return String(n === 0 ? 0 : n);
  };
}

function parseNumber(raw: unknown): number | CoerceFailure {
  if (typeof raw === 'number') return raw;
  if (typeof raw === 'bigint') {
    return Number.isSafeInteger(Number(raw))
      ? Number(raw)
      : new CoerceFailure('integer too large to write without losing digits (max 9007199254740991)');
  }
  if (typeof raw !== 'string') return new CoerceFailure(`expected a number, got ${kindOf(raw)}`);
  const text = raw.trim();
  if (isPlainDecimal(text)) return Number(text);
  if (!DECIMAL.test(text) || !HAS_DIGIT.test(text)) {
    return new CoerceFailure('not a number: expected a plain decimal like 1234.5 or 1,234.50');
  }
  return Number(text.includes(',') ? text.replaceAll(',', '') : text);
}

export function createCheckboxCoercer(): Coercer {
  return (raw) => {
    if (typeof raw === 'boolean') return raw ? '1' : '0';
    if (raw === 1 || raw === 0) return raw === 1 ? '1' : '0';
    if (typeof raw === 'string') {
      const word = raw.trim().toLowerCase();
      if (TRUE_WORDS.has(word)) return '1';
      if (FALSE_WORDS.has(word)) return '0';
    }
    return new CoerceFailure('not a checkbox value: expected true/false, 1/0, yes/no or y/n');
  };
}

/** Region: the platform's region code, written as a string (numbers from JSON/DB are allowed). */
export function createRegionCoercer(): Coercer {
  return (raw) => {
    if (typeof raw === 'number' && Number.isInteger(raw)) return String(raw);
    if (typeof raw === 'string' && raw.trim() !== '') return raw.trim();
    return new CoerceFailure(`expected a region code (string), got ${kindOf(raw)}`);
  };
}
