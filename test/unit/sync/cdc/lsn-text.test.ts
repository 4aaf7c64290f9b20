import { describe, expect, it } from 'vitest';
import { lsnText, lsnValue } from '../../../../src/sync/cdc/stream-changes.ts';

describe('LSN text and value', () => {
  it('round-trip, across the 32-bit half', () => {
    for (const lsn of ['0/0', '0/1559030', '16/B374D848', '1/0', 'FFFFFFFF/FFFFFFFF'])
      expect(lsnText(lsnValue(lsn))).toBe(lsn);
    // The acknowledgement hands pg-logical-replication one less (it adds one back).
    expect(lsnText(lsnValue('1/0') - 1n)).toBe('0/FFFFFFFF');
  });
});
