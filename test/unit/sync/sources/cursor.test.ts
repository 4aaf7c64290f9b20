import { describe, expect, it } from 'vitest';
import { isLaterCursor } from '../../../../src/sync/sources/cursor.ts';

describe('isLaterCursor: the cursor a run saves only moves forward', () => {
  it('anything is later than no cursor', () => {
    expect(isLaterCursor('2024-01-01', undefined)).toBe(true);
    expect(isLaterCursor(0, null)).toBe(true);
    expect(isLaterCursor('', undefined)).toBe(true);
    expect(isLaterCursor(null, null)).toBe(true);
  });

  it('a record without a cursor value never moves the cursor', () => {
    expect(isLaterCursor(undefined, '')).toBe(false);
    expect(isLaterCursor(undefined, 'a')).toBe(false);
  });

  it('numbers compare as numbers, not as text', () => {
    expect(isLaterCursor(10, 9)).toBe(true);
    expect(isLaterCursor(9, 10)).toBe(false);
    expect(isLaterCursor(10, 10)).toBe(false);
  });

  it('dates compare as instants', () => {
    expect(isLaterCursor(new Date('2024-01-02T00:00:00Z'), new Date('2024-01-01T23:59:59Z'))).toBe(true);
    expect(isLaterCursor(new Date('2024-01-01T00:00:00Z'), new Date('2024-01-01T00:00:00Z'))).toBe(false);
  });

  it('ISO timestamps and other text compare as text; a Date against text by its ISO form', () => {
    expect(isLaterCursor('2024-01-01T00:00:01.000Z', '2024-01-01T00:00:00.000Z')).toBe(true);
    expect(isLaterCursor('2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z')).toBe(false);
    expect(isLaterCursor(new Date('2024-01-02T00:00:00Z'), '2024-01-01T00:00:00.000Z')).toBe(true);
    expect(isLaterCursor('b', 'a')).toBe(true);
    expect(isLaterCursor(12n, '11')).toBe(true);
    expect(isLaterCursor(true, 'false')).toBe(true);
    expect(isLaterCursor({ v: 2 }, '{"v":1}')).toBe(true);
  });

  it('numbers given as text (CSV, JSON strings) compare as numbers, as the sources filter them', () => {
    // As text "999" is past "3000": the run would save a cursor below its last record.
    expect(isLaterCursor('3000', '999')).toBe(true);
    expect(isLaterCursor('999', '3000')).toBe(false);
    expect(isLaterCursor(10, '9')).toBe(true);
    expect(isLaterCursor('9', 10)).toBe(false);
    expect(isLaterCursor('10', '10')).toBe(false);
  });

  it('timestamps in different forms compare as instants', () => {
    expect(isLaterCursor('2024-01-01 10:00:00Z', '2024-01-01T09:30:00.000Z')).toBe(true);
    expect(isLaterCursor(new Date('2024-01-01T09:00:00Z'), '2024-01-01T09:00:00.000001Z')).toBe(false);
    expect(isLaterCursor(new Date('2024-01-01T10:00:00Z'), '2024-01-01 09:30:00Z')).toBe(true);
    expect(isLaterCursor('2024-01-01 09:30:00Z', new Date('2024-01-01T10:00:00Z'))).toBe(false);
  });
});
