import { describe, expect, it } from 'vitest';
import { accountingError, unmetExpectations } from '../../../../src/sync/check/run-checks.ts';

const counts = {
  read: 10,
  created: 4,
  updated: 2,
  unchanged: 2,
  skipped: 1,
  deleted: 0,
  deadLetteredTotal: 1,
};

describe('a run accounts for every row (issue 27 §2)', () => {
  it('passes when read = created + updated + unchanged + skipped + dead-lettered', () => {
    expect(accountingError(counts)).toBeUndefined();
    // A mirror's deletes are rows never read: beside the sum, not in it.
    expect(accountingError({ ...counts, deleted: 7 })).toBeUndefined();
  });
  it('names the difference either way', () => {
    expect(accountingError({ ...counts, created: 6 })).toContain('= 12 (2 rows more than read)');
    expect(accountingError({ ...counts, read: 11 })).toContain('(1 row unaccounted for)');
  });
});

describe('expect: (issue 27 §2)', () => {
  it('maxDeleteRatio compares deletes with the rows the worksheet had (read + deleted)', () => {
    const mirror = {
      ...counts,
      read: 2,
      created: 0,
      updated: 0,
      unchanged: 2,
      skipped: 0,
      deadLetteredTotal: 0,
    };
    expect(unmetExpectations({ maxDeleteRatio: 0.3 }, { ...mirror, deleted: 2 })).toEqual([
      'maxDeleteRatio 0.3: 2 rows deleted, 50.0% of 4',
    ]);
    expect(unmetExpectations({ maxDeleteRatio: 0.5 }, { ...mirror, deleted: 2 })).toEqual([]);
  });
  it('minRows > 0 never lets an empty run pass; ratios hold at their bound', () => {
    const empty = {
      ...counts,
      read: 0,
      created: 0,
      updated: 0,
      unchanged: 0,
      skipped: 0,
      deadLetteredTotal: 0,
    };
    expect(unmetExpectations({ minRows: 1 }, empty)).toEqual(['minRows 1: the run read 0 rows']);
    expect(unmetExpectations({ maxDeadLetterRatio: 0.1 }, counts)).toEqual([]);
    expect(unmetExpectations({ maxDeadLetterRatio: 0.05 }, counts)[0]).toContain(
      '1 of 10 rows dead-lettered',
    );
  });
});
