import dayjs from 'dayjs';
import customParseFormat from 'dayjs/plugin/customParseFormat.js';
import utc from 'dayjs/plugin/utc.js';
import { describe, expect, it } from 'vitest';
import { compileFormat } from '../../../../src/sync/mapping/compile-format.ts';

dayjs.extend(customParseFormat);
dayjs.extend(utc);

const FORMATS = [
  'DD/MM/YYYY',
  'D/M/YYYY',
  'MM-DD-YY',
  'YYYY-MM-DD HH:mm:ss',
  'YYYY-MM-DD[T]HH:mm',
  'DD.MM.YYYY H:m:s',
  'YYYYMMDD',
  'YYYY-MM-DD HH:mm:ss.SSS',
  'h:mm A',
  'hh:mm a',
  'HH:mm',
  'H:mm:ss',
];

/** Deterministic candidates: values dayjs formats itself, then the usual near misses. */
function candidates(format: string): string[] {
  let seed = 42;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const out: string[] = [];
  for (let i = 0; i < 150; i++) {
    const instant = Date.UTC(
      1940 + (next() % 120),
      next() % 12,
      1 + (next() % 31),
      next() % 24,
      next() % 60,
      next() % 60,
      next() % 1000,
    );
    const good = dayjs.utc(instant).format(format);
    out.push(
      good,
      good.replace(/\b0(\d)/, '$1'), // a padded field unpadded
      good.replace(/\b(\d)\b/, '0$1'), // an unpadded field padded
      good.replace(/\d/, (d) => String((Number(d) + 5) % 10)), // a digit pushed out of range
      good.toLowerCase(),
      good.toUpperCase(),
      ` ${good}`,
      `${good}x`,
    );
  }
  out.push(
    '31/02/2024',
    '29/02/2023',
    '29/02/2024',
    '00/01/2024',
    '24:00',
    '12:00 AM',
    '0:30 AM',
    '13:00 PM',
    '2024-13-01 00:00:00',
    '01/01/0050',
    '0050-01-01 00:00:00',
  );
  return out;
}

describe('compileFormat', () => {
  it.each(FORMATS)('accepts exactly what dayjs strict mode accepts for %s', (format) => {
    const parse = compileFormat(format);
    expect(parse).toBeDefined();
    const hasDate = /[YMD]/.test(format);
    let accepted = 0;
    for (const text of candidates(format)) {
      const reference = dayjs.utc(text, format, true);
      const mine = parse!(text);
      expect({ text, valid: mine !== undefined }).toEqual({ text, valid: reference.isValid() });
      if (mine === undefined) continue;
      accepted++;
      const wanted = { h: reference.hour(), mi: reference.minute(), s: reference.second() };
      expect({ h: mine.h, mi: mine.mi, s: mine.s }).toEqual(wanted);
      if (hasDate)
        expect([mine.y, mine.mo, mine.d]).toEqual([
          reference.year(),
          reference.month() + 1,
          reference.date(),
        ]);
    }
    expect(accepted).toBeGreaterThan(100);
  });

  it.each([
    'MMM D, YYYY',
    'Do MMMM YYYY',
    'YYYY-MM',
    'h:mm',
    'HH:mm A',
    'ss.S',
    'YYYY-MM-DDTHH:mm',
    'dddd DD/MM/YYYY',
    '[unclosed',
  ])('leaves %s to dayjs', (format) => {
    expect(compileFormat(format)).toBeUndefined();
  });
});
