import { describe, expect, it } from 'vitest';
import { compareCursor, createCursorFilter } from '../../../../src/sync/sources/cursor-filter.ts';

describe('compareCursor', () => {
  it('orders numeric values as numbers, including numeric strings and huge integers', () => {
    expect(compareCursor('10', '9')).toBe(1);
    expect(compareCursor(9, '10')).toBe(-1);
    expect(compareCursor('2.50', 2.5)).toBe(0);
    expect(compareCursor('9007199254740993', '9007199254740992')).toBe(1);
  });

  it('orders dates as instants, whatever their zone, and microseconds past the millisecond', () => {
    expect(compareCursor('2024-01-01T10:00:00+02:00', '2024-01-01T09:00:00Z')).toBe(-1);
    expect(compareCursor(new Date('2024-01-02T00:00:00Z'), '2024-01-01T23:59:59.999Z')).toBe(1);
    expect(compareCursor('2024-01-01 12:00:00.123457+00', '2024-01-01 12:00:00.123456+00')).toBe(1);
    expect(compareCursor('2024-01-01T12:00:00.123Z', '2024-01-01T12:00:00.123000Z')).toBe(0);
  });

  it('falls back to string order for other values', () => {
    expect(compareCursor('b', 'a')).toBe(1);
    expect(compareCursor('abc', 'abd')).toBe(-1);
  });
});

describe('createCursorFilter', () => {
  it('keeps only records past since, and keeps records without a cursor value', () => {
    const keep = createCursorFilter('2024-05-01', 'updated');
    expect(keep({ updated: '2024-05-02T00:00:00Z' })).toEqual({ keep: true, cursor: '2024-05-02T00:00:00Z' });
    expect(keep({ updated: '2024-05-01' })).toEqual({ keep: false, cursor: '2024-05-01' });
    expect(keep({ updated: '' })).toEqual({ keep: true });
    expect(keep({})).toEqual({ keep: true });
  });

  it('without a cursor field keeps everything and sets no cursor', () => {
    expect(createCursorFilter('5', undefined)({ v: 1 })).toEqual({ keep: true });
  });
});
