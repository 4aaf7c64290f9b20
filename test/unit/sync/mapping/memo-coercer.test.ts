import { describe, expect, it } from 'vitest';
import type { WorksheetField } from '../../../../src/api/types.ts';
import { CoerceFailure } from '../../../../src/sync/mapping/coerce-result.ts';
import { mapRecord } from '../../../../src/sync/mapping/map-record.ts';
import {
  MEMO_ENTRIES,
  MEMO_MAX_LENGTH,
  MEMO_PROBE,
  memoize,
} from '../../../../src/sync/mapping/memo-coercer.ts';
import { validateMapping } from '../../../../src/sync/mapping/validate-mapping.ts';
import { seededRandom } from '../../../helpers/seeded-random.ts';

/** A coercion that counts its calls: what the cache saves is calls not made. */
function counted(): { coerce: (raw: unknown) => unknown; calls: () => number } {
  let calls = 0;
  return {
    coerce: (raw) => {
      calls += 1;
      return typeof raw === 'string' && raw.startsWith('bad')
        ? new CoerceFailure(`bad: ${raw}`)
        : `<${String(raw)}>`;
    },
    calls: () => calls,
  };
}

describe('memoize (coercions of values that repeat)', () => {
  it('coerces each distinct short text once, failures included, and gives what the coercion gives', () => {
    const inner = counted();
    const coerce = memoize(inner.coerce);
    const texts = Array.from({ length: 50 }, (_, i) => (i % 10 === 0 ? `bad${i}` : `t${i}`));
    for (let round = 0; round < 100; round++) {
      for (const text of texts) {
        const value = coerce(text);
        if (text.startsWith('bad')) expect((value as CoerceFailure).reason).toBe(`bad: ${text}`);
        else expect(value).toBe(`<${text}>`);
      }
    }
    expect(inner.calls()).toBe(texts.length);
  });

  it('passes numbers, objects and texts longer than it keeps straight through', () => {
    const inner = counted();
    const coerce = memoize(inner.coerce);
    const long = 'x'.repeat(MEMO_MAX_LENGTH + 1);
    for (let round = 0; round < 10; round++) {
      expect(coerce(long)).toBe(`<${long}>`);
      expect(coerce(42)).toBe('<42>');
    }
    expect(inner.calls()).toBe(20);
  });

  it(`starts over when ${MEMO_ENTRIES} texts are held`, () => {
    const inner = counted();
    const coerce = memoize(inner.coerce);
    for (let i = 0; i <= MEMO_ENTRIES; i++) coerce(`v${i}`); // the last one starts over
    coerce('v0');
    expect(inner.calls()).toBe(MEMO_ENTRIES + 2);
    coerce(`v${MEMO_ENTRIES}`);
    expect(inner.calls()).toBe(MEMO_ENTRIES + 2);
  });

  it(`stops keeping values of a field that repeats less than half the time after ${MEMO_PROBE} lookups`, () => {
    const inner = counted();
    const coerce = memoize(inner.coerce);
    // Every third value repeats the one before: a third of the lookups hit.
    for (let i = 0; i < MEMO_PROBE; i++) coerce(`s${i % 3 === 2 ? i - 1 : i}`);
    const before = inner.calls();
    for (let round = 0; round < 5; round++) coerce('s1');
    expect(inner.calls()).toBe(before + 5);
  });

  it('keeps values of a field that repeats more than half the time', () => {
    const inner = counted();
    const coerce = memoize(inner.coerce);
    for (let i = 0; i < MEMO_PROBE * 2; i++) coerce(`d${i % 100}`);
    expect(inner.calls()).toBe(100);
  });

  it('maps random dates, times and date-times as the coercion does without it', () => {
    const fields: WorksheetField[] = [
      { id: 'f_d', name: 'D', type: 'Date' },
      { id: 'f_dt', name: 'DT', type: 'DateTime' },
      { id: 'f_t', name: 'T', type: 'Time' },
      { id: 'f_iso', name: 'ISO', type: 'Date' },
    ];
    const plan = validateMapping(
      [
        { target: 'f_d', from: 'd', format: 'DD/MM/YYYY' },
        { target: 'f_dt', from: 'dt', format: 'DD/MM/YYYY HH:mm', timezone: 'Europe/Berlin' },
        { target: 'f_t', from: 't' },
        { target: 'f_iso', from: 'iso' },
      ],
      { id: 'ws', name: 'Sheet', fields },
      { mode: 'append', targetTimezone: 'Asia/Tokyo' },
    );
    // The same plan's coercions, memoized, against fresh ones for each record.
    const random = seededRandom(7);
    const pick = (n: number) => Math.floor(random() * n);
    const two = (n: number) => String(n).padStart(2, '0');
    for (let i = 0; i < 3000; i++) {
      const day = two(pick(32));
      const month = two(pick(13) + (i % 7 === 0 ? 1 : 0));
      const record = {
        d: `${day}/${month}/20${two(pick(30))}`,
        dt: `${day}/${month}/2024 ${two(pick(25))}:${two(pick(60))}`,
        t: `${two(pick(25))}:${two(pick(61))}`,
        iso: `2024-${month}-${day}`,
      };
      const fresh = validateMapping(
        plan.fields.map((f) => f.mapping),
        { id: 'ws', name: 'Sheet', fields },
        { mode: 'append', targetTimezone: 'Asia/Tokyo' },
      );
      expect(mapRecord(plan, record), JSON.stringify(record)).toEqual(mapRecord(fresh, record));
    }
  });
});
