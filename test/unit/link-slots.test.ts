/**
 * The links of a run reading changes, in brief (src/sync/two-way/link-slots.ts): each link
 * once though HSCAN gave it twice, which side's key scan found it, and which quiet records
 * hold a key a new record has.
 */
import { describe, expect, it } from 'vitest';
import { createLinkSlots } from '../../src/sync/two-way/link-slots.ts';

describe('link slots', () => {
  it('keeps each link once when the index repeats one, in the index order', () => {
    const index = { keys: ['1', '2', '1', '3'], rowIds: ['r1', 'r2', 'r1', 'r3'] };
    const slots = createLinkSlots(index);
    expect(slots.size).toBe(3);
    expect([0, 1, 2].map((i) => [slots.key(i), slots.rowId(i)])).toEqual([
      ['1', 'r1'],
      ['2', 'r2'],
      ['3', 'r3'],
    ]);
    expect(index.keys).toEqual(['1', '2', '3']);
  });

  it('tells linked records from new ones, and which side a key scan found', () => {
    const slots = createLinkSlots({ keys: ['1', '2'], rowIds: ['r1', 'r2'] });
    expect(slots.see('source', '1', 'a@x')).toBe(true);
    expect(slots.see('source', '9', 'z@x')).toBe(false);
    expect(slots.see('worksheet', 'r2', 'b@x')).toBe(true);
    expect(slots.see('worksheet', '1', 'a@x')).toBe(false);
    expect([slots.seen(0, 'source'), slots.seen(0, 'worksheet')]).toEqual([true, false]);
    expect([slots.seen(1, 'source'), slots.seen(1, 'worksheet')]).toEqual([false, true]);
    expect([slots.linkedKey('2'), slots.linkedKey('r2'), slots.linkedRow('r2')]).toEqual([true, false, true]);
  });

  it('finds the quiet records holding a key, on either side, and never for an empty key', () => {
    const slots = createLinkSlots({ keys: ['1', '2', '3', '4'], rowIds: ['r1', 'r2', 'r3', 'r4'] });
    const keys = ['a@x', 'b@x', 'c@x', ''];
    keys.forEach((k, i) => {
      slots.see('source', String(i + 1), k);
      slots.see('worksheet', `r${i + 1}`, k === 'b@x' ? 'B@x' : k);
    });
    slots.setQuiet(0, 'source');
    slots.setQuiet(1, 'worksheet');
    slots.setQuiet(3, 'source');
    // Record 3 holds c@x but is not quiet: it is read whole already.
    expect(slots.quietMatching(['c@x'])).toEqual([]);
    expect(slots.quietMatching(['a@x'])).toEqual([0]);
    // Record 2's worksheet side holds B@x; its source side (b@x) is not quiet.
    expect(slots.quietMatching(['b@x'])).toEqual([]);
    expect(slots.quietMatching(['B@x', 'a@x', 'zz'])).toEqual([0, 1]);
    expect(slots.quietMatching([''])).toEqual([]);
    expect([slots.isQuiet(1, 'source'), slots.isQuiet(1, 'worksheet')]).toEqual([false, true]);
  });
});

describe('link slots, row hashes', () => {
  it('tells a changed row hash from a stored one, and names the stored ones no scan found', () => {
    const slots = createLinkSlots({ keys: ['1', '2', '3'], rowIds: ['r1', 'r2', 'r3'] });
    slots.storeRowHash('1', '0123456789abcdef');
    slots.storeRowHash('2', 'fedcba9876543210');
    slots.storeRowHash('3', '00000000ffffffff');
    // Not linked, or not 16 hex digits: kept as they came.
    slots.storeRowHash('9', 'aaaaaaaaaaaaaaaa');
    slots.storeRowHash('8', 'not-a-hex-hash');
    expect(slots.rowHashChanged('1', '0123456789abcdef')).toBe(false);
    expect(slots.rowHashChanged('2', 'fedcba9876543211')).toBe(true);
    expect(slots.rowHashChanged('2', 'fedcba9976543210')).toBe(true);
    expect(slots.rowHashChanged('9', 'aaaaaaaaaaaaaaaa')).toBe(false);
    expect(slots.rowHashChanged('7', '0123456789abcdef')).toBe(true);
    expect(slots.unfoundRowHashes().sort()).toEqual(['3', '8']);
  });
});
