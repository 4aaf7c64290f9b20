import { describe, expect, it } from 'vitest';
import type { WorksheetStructure } from '../../../../src/api/types.ts';
import { decideKeyScan } from '../../../../src/sync/write/key-scan.ts';
import type { KeyScanTarget } from '../../../../src/sync/write/key-scan.ts';
import type { MappingPlan } from '../../../../src/sync/mapping/plan-types.ts';
import type { IndexAdoption } from '../../../../src/sync/state/index-adoption.ts';
import type { KeyIndex } from '../../../../src/sync/state/key-index.ts';

const stamp: IndexAdoption = {
  at: '2026-11-26T10:00:00.000Z',
  worksheetId: 'ws1',
  keyFields: ['f-no'],
  format: 'compact',
  keys: 5_000,
};

/** A target whose index holds `size` keys and whose job was stamped with `adopted`. */
function target(over: {
  adopted?: IndexAdoption;
  size?: number;
  mode?: KeyScanTarget['mode'];
  ws?: string;
  key?: string;
}) {
  return {
    job: 'orders',
    mode: over.mode ?? 'upsert',
    structure: { id: over.ws ?? 'ws1' } as WorksheetStructure,
    plan: { keyIndexes: [0], fields: [{ id: over.key ?? 'f-no' }] } as unknown as MappingPlan,
    index: { size: () => Promise.resolve(over.size ?? 5_000) } as KeyIndex,
    adoptions: { get: () => Promise.resolve(over.adopted), stamp: () => Promise.resolve() },
  } satisfies KeyScanTarget;
}
const plain = { full: false, replay: false };

describe('whether a run scans the worksheet to match keys', () => {
  it('trusts an index stamped by a full scan that still holds its keys', async () => {
    expect(await decideKeyScan(target({ adopted: stamp, size: 5_003 }), plain)).toMatchObject({
      scan: false,
      reason: 'adopted',
    });
  });

  it('scans a job no scan adopted, and one whose index lost keys', async () => {
    expect(await decideKeyScan(target({}), plain)).toMatchObject({ scan: true, reason: 'first-run' });
    const lost = await decideKeyScan(target({ adopted: stamp, size: 0 }), plain);
    expect(lost).toMatchObject({ scan: true, reason: 'index-lost' });
    expect(lost.detail).toContain('holds 0 keys where the full scan of 2026-11-26T10:00:00.000Z left 5000');
  });

  it('scans for --full, a mirror, another worksheet or key, and a format change', async () => {
    const reason = async (t: KeyScanTarget, run = plain) => (await decideKeyScan(t, run)).reason;
    expect(await reason(target({ adopted: stamp }), { full: true, replay: false })).toBe('full');
    expect(await reason(target({ adopted: { ...stamp, format: 'keys' }, mode: 'mirror' }))).toBe('mirror');
    expect(await reason(target({ adopted: stamp, ws: 'ws2' }))).toBe('target-changed');
    expect(await reason(target({ adopted: stamp, key: 'f-other' }))).toBe('target-changed');
    expect(await reason(target({ adopted: { ...stamp, format: 'keys' } }))).toBe('index-format');
  });

  it('never scans for a replay, even of a job no scan adopted', async () => {
    expect(await decideKeyScan(target({}), { full: false, replay: true })).toMatchObject({
      scan: false,
      reason: 'replay',
    });
  });
});
