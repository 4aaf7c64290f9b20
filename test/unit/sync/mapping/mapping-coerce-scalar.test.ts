import { describe, expect, it } from 'vitest';
import type { WorksheetField } from '../../../../src/api/types.ts';
import { mapRecord } from '../../../../src/sync/mapping/map-record.ts';
import type { MapResult } from '../../../../src/sync/mapping/map-result.ts';
import { validateMapping } from '../../../../src/sync/mapping/validate-mapping.ts';
import type { FieldMapping } from '../../../../src/sync/model/types.ts';
import { seededRandom } from '../../../helpers/seeded-random.ts';

function planFor(field: WorksheetField, mapping: Partial<FieldMapping> = {}) {
  return validateMapping(
    [{ target: field.alias ?? field.id, from: 'col', ...mapping }],
    { id: 'ws', name: 'Sheet', fields: [field] },
    { mode: 'append' },
  );
}

function mapOne(field: WorksheetField, raw: unknown, mapping: Partial<FieldMapping> = {}): MapResult {
  return mapRecord(planFor(field, mapping), { col: raw });
}

function valueOf(result: MapResult): unknown {
  if (!result.ok) throw new Error(`rejected: ${JSON.stringify(result.errors)}`);
  return result.fields[0]?.value;
}

function reasonOf(result: MapResult): string {
  if (result.ok) throw new Error(`accepted: ${JSON.stringify(result.fields)}`);
  expect(result.category).toBe('invalid-row');
  expect(result.errors).toHaveLength(1);
  return result.errors[0]!.reason;
}

const text: WorksheetField = { id: 'f_text', name: 'Name', alias: 'name', type: 'Text' };
const email: WorksheetField = { id: 'f_email', name: 'Email', alias: 'email', type: '5' };
const phone: WorksheetField = { id: 'f_phone', name: 'Phone', alias: 'phone', type: 'PhoneNumber' };
const qty: WorksheetField = { id: 'f_qty', name: 'Quantity', alias: 'qty', type: 'Number' };
const price: WorksheetField = { id: 'f_price', name: 'Price', alias: 'price', type: '8', precision: 2 };
const stars: WorksheetField = { id: 'f_stars', name: 'Stars', alias: 'stars', type: 'Rating', max: 5 };
const active: WorksheetField = { id: 'f_active', name: 'Active', alias: 'active', type: 'Checkbox' };
const region: WorksheetField = { id: 'f_region', name: 'Region', alias: 'region', type: 'Region' };

describe('text-like fields', () => {
  it('writes strings as they are and numbers/booleans as their text', () => {
    expect(valueOf(mapOne(text, '  padded  '))).toBe('  padded  ');
    expect(valueOf(mapOne(text, 42))).toBe('42');
    expect(valueOf(mapOne(text, true))).toBe('true');
  });

  it('rejects an object for a text field, naming field, column and value', () => {
    const result = mapOne(text, { a: 1 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors[0]).toMatchObject({ field: 'name', column: 'col', value: '{"a":1}' });
    expect(result.errors[0]!.reason).toMatch(/expected text/);
  });

  it('checks emails for an @ and trims them', () => {
    expect(valueOf(mapOne(email, ' ana@example.com '))).toBe('ana@example.com');
    expect(reasonOf(mapOne(email, 'ana.example.com'))).toMatch(/not an email address/);
  });

  it('accepts phone punctuation and rejects words', () => {
    expect(valueOf(mapOne(phone, '+49 (30) 123-456 ext 7'))).toBe('+49 (30) 123-456 ext 7');
    expect(reasonOf(mapOne(phone, 'call me'))).toMatch(/not a phone number/);
  });

  it('truncates a long bad value to 200 characters in the error', () => {
    const result = mapOne(email, 'x'.repeat(5000));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0]!.value).toHaveLength(200);
  });
});

describe('numbers', () => {
  it('reads CSV decimals, thousands separators and typed numbers alike', () => {
    expect(valueOf(mapOne(qty, '1234.5'))).toBe(1234.5);
    expect(valueOf(mapOne(qty, '1,234.50'))).toBe(1234.5);
    expect(valueOf(mapOne(qty, ' -7 '))).toBe(-7);
    expect(valueOf(mapOne(qty, '.5'))).toBe(0.5);
    expect(valueOf(mapOne(qty, 9.99))).toBe(9.99);
    expect(valueOf(mapOne(price, 12n))).toBe(12);
  });

  it('rejects text, ambiguous separators and non-finite numbers with what is allowed', () => {
    expect(reasonOf(mapOne(qty, 'abc'))).toMatch(/not a number: expected a plain decimal/);
    expect(reasonOf(mapOne(qty, '1,5'))).toMatch(/not a number/); // decimal comma or typo: not guessed
    expect(reasonOf(mapOne(qty, '12,34.5'))).toMatch(/not a number/);
    expect(reasonOf(mapOne(qty, Number.NaN))).toMatch(/finite number/);
    expect(reasonOf(mapOne(qty, 2n ** 60n))).toMatch(/too large/);
  });

  it('reads 20,000 random texts of signs, digits, points and commas as the decimal rule says', () => {
    // The rule: an optional sign, digits (thousands separated by commas or none), an
    // optional point and digits, at least one digit; the number is the text without commas.
    const rule = /^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?$/;
    const random = seededRandom(20261126);
    const plan = planFor(qty);
    for (let round = 0; round < 20_000; round++) {
      const length = 1 + Math.floor(random() * 9);
      let text = '';
      for (let k = 0; k < length; k++) text += '+-0123456789.,5 '[Math.floor(random() * 16)];
      const result = mapRecord(plan, { col: text });
      const trimmed = text.trim();
      if (trimmed === '') continue; // empty: not coerced
      if (rule.test(trimmed) && /\d/.test(trimmed)) {
        const expected = Number(trimmed.replaceAll(',', ''));
        expect(valueOf(result), JSON.stringify(text)).toBe(expected === 0 ? 0 : expected);
      } else expect(reasonOf(result), JSON.stringify(text)).toMatch(/not a number/);
    }
  });

  it('writes a rating as a digit string, whole stars from 0 to the field max (platform-shapes §7)', () => {
    expect(valueOf(mapOne(stars, '4'))).toBe('4');
    expect(valueOf(mapOne(stars, 5))).toBe('5');
    expect(valueOf(mapOne(stars, '0'))).toBe('0');
    expect(reasonOf(mapOne(stars, '3.5'))).toMatch(/whole number of stars, 0 to 5/);
    expect(reasonOf(mapOne(stars, 6))).toBe('a rating is a whole number of stars, 0 to 5; got 6');
    expect(reasonOf(mapOne({ id: 'f_s', name: 'S', type: 'Rating' }, -1))).toMatch(/0 or more/);
  });

  it('keeps Number and Currency JSON numbers (platform-shapes §7)', () => {
    expect(valueOf(mapOne(qty, '125000.5'))).toBe(125000.5);
    expect(valueOf(mapOne(price, 980))).toBe(980);
  });
});

describe('checkbox', () => {
  // The platform's form is "1"/"0", not JSON booleans (platform-shapes §7, row-create.json).
  it.each([
    ['true', '1'],
    ['FALSE', '0'],
    ['1', '1'],
    ['0', '0'],
    ['Yes', '1'],
    ['no', '0'],
    ['Y', '1'],
    ['n', '0'],
    [1, '1'],
    [0, '0'],
    [true, '1'],
    [false, '0'],
  ])('writes %j as %j', (raw, expected) => {
    expect(valueOf(mapOne(active, raw))).toBe(expected);
  });

  it('rejects anything else, listing the accepted words', () => {
    expect(reasonOf(mapOne(active, 'maybe'))).toBe(
      'not a checkbox value: expected true/false, 1/0, yes/no or y/n',
    );
    expect(reasonOf(mapOne(active, 2))).toMatch(/yes\/no/);
  });
});

describe('region', () => {
  it('writes a region code as a string', () => {
    expect(valueOf(mapOne(region, '110000'))).toBe('110000');
    expect(valueOf(mapOne(region, 110000))).toBe('110000');
    expect(reasonOf(mapOne(region, { code: 1 }))).toMatch(/region code/);
  });
});

describe('empty values, defaults and constants', () => {
  it('clears a scalar with null and an array field with []', () => {
    expect(valueOf(mapOne(qty, ''))).toBeNull();
    expect(valueOf(mapOne(qty, '   '))).toBeNull(); // padded CSV cell
    expect(valueOf(mapOne(qty, undefined))).toBeNull();
    const tags: WorksheetField = {
      id: 'f_tags',
      name: 'Tags',
      alias: 'tags',
      type: 'MultipleSelect',
      options: [],
    };
    expect(valueOf(mapOne(tags, null))).toEqual([]);
  });

  it('keeps whitespace in text fields: spaces are content there', () => {
    expect(valueOf(mapOne(text, ' '))).toBe(' ');
  });

  it('treats a record without the column as empty', () => {
    expect(valueOf(mapRecord(planFor(qty), { other: 1 }))).toBeNull();
  });

  it('fills empty cells with the coerced default', () => {
    expect(valueOf(mapOne(qty, '', { default: '1,000' }))).toBe(1000);
    expect(valueOf(mapOne(qty, '5', { default: '1,000' }))).toBe(5);
  });

  it('rejects an empty required field with "required"', () => {
    const reason = reasonOf(mapOne({ ...qty, required: true }, ''));
    expect(reason).toMatch(/^required/);
  });

  it('sends a constant value through the same coercion once', () => {
    const plan = validateMapping(
      [{ target: 'active', value: 'yes' }],
      { id: 'ws', name: 'Sheet', fields: [active] },
      { mode: 'append' },
    );
    expect(valueOf(mapRecord(plan, {}))).toBe('1');
  });

  it('reports every failing field of a row at once', () => {
    const plan = validateMapping(
      [
        { target: 'qty', from: 'q' },
        { target: 'active', from: 'a' },
        { target: 'name', from: 'n' },
      ],
      { id: 'ws', name: 'Sheet', fields: [qty, active, text] },
      { mode: 'append' },
    );
    const result = mapRecord(plan, { q: 'ten', a: 'perhaps', n: 'ok' }, { position: { index: 7, line: 9 } });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => [e.field, e.column, e.value])).toEqual([
      ['qty', 'q', 'ten'],
      ['active', 'a', 'perhaps'],
    ]);
    expect(result.position).toEqual({ index: 7, line: 9 });
  });
});
