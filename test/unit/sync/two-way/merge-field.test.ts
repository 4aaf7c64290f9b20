import { describe, expect, it } from 'vitest';
import { decideField } from '../../../../src/sync/two-way/merge-field.ts';
import type { FieldBase, FieldDecision, MergeTimes } from '../../../../src/sync/two-way/merge-field.ts';
import type { ConflictPolicy, FieldDirection } from '../../../../src/sync/job-spec/two-way-options.ts';

const VALUES = ['a', 'b', 'c', 'd'];
const BASES: Array<string | undefined> = [undefined, 'a', 'b'];
const PENDINGS: Array<string | undefined> = [undefined, 'a', 'b', 'c'];
const POLICIES: ConflictPolicy[] = ['newest', 'source', 'worksheet', 'manual'];
const DIRECTIONS: FieldDirection[] = ['both', 'to-worksheet', 'to-source'];
const TIMES: MergeTimes[] = [
  {},
  { worksheet: 2, source: 1 },
  { worksheet: 1, source: 2 },
  { worksheet: 5, source: 5 },
  { worksheet: 1 },
];

/** Which way the value goes, stated independently of the implementation: per the rules. */
function expected(
  b: FieldBase,
  ws: string,
  src: string,
  conflict: ConflictPolicy,
  direction: FieldDirection,
  times: MergeTimes,
): FieldDecision['kind'] {
  if (ws === src) return 'same';
  if (direction !== 'both') return direction;
  const known = new Set([b.base, b.pending].filter((v) => v !== undefined));
  const wsEdited = b.base === undefined || !known.has(ws);
  const srcEdited = b.base === undefined || !known.has(src);
  if (wsEdited && !srcEdited) return 'to-source';
  if (srcEdited && !wsEdited) return 'to-worksheet';
  if (!wsEdited && !srcEdited) return src === b.pending ? 'to-worksheet' : 'to-source';
  if (conflict === 'source') return 'to-worksheet';
  if (conflict === 'worksheet') return 'to-source';
  if (conflict === 'manual') return 'conflict';
  if (times.worksheet === undefined || times.source === undefined) return 'conflict';
  return times.worksheet > times.source ? 'to-source' : 'to-worksheet';
}

describe('decideField (issue 25)', () => {
  it('agrees with the rules on every combination of base, pending write, values, policy, direction and times', () => {
    let checked = 0;
    for (const base of BASES)
      for (const pending of base === undefined ? [undefined] : PENDINGS)
        for (const ws of VALUES)
          for (const src of VALUES)
            for (const conflict of POLICIES)
              for (const direction of DIRECTIONS)
                for (const times of TIMES) {
                  const b: FieldBase = { base, pending };
                  const got = decideField(b, ws, src, { conflict, direction }, times).kind;
                  const want = expected(b, ws, src, conflict, direction, times);
                  if (got !== want)
                    throw new Error(
                      `${JSON.stringify({ b, ws, src, conflict, direction, times })}: ${got} != ${want}`,
                    );
                  checked++;
                }
    expect(checked).toBe(8640);
  });

  const both = { conflict: 'manual' as const, direction: 'both' as const };

  it("never takes rowbridge's own write for an edit: a copied value settles on the next run", () => {
    // Source edited a -> b: copied to the worksheet; the next run sees both at b, base b.
    expect(decideField({ base: 'a' }, 'a', 'b', both, {}).kind).toBe('to-worksheet');
    expect(decideField({ base: 'b' }, 'b', 'b', both, {}).kind).toBe('same');
  });

  it('resumes a write a stopped run recorded but did not make, in the direction it had decided', () => {
    expect(decideField({ base: 'a', pending: 'b' }, 'a', 'b', both, {}).kind).toBe('to-worksheet');
    expect(decideField({ base: 'a', pending: 'b' }, 'b', 'a', both, {}).kind).toBe('to-source');
  });

  it('keeps an edit made after a stopped run had written one side: the edit wins, no conflict', () => {
    // Run decided b (source edit), wrote the worksheet, died; then a person typed c in the worksheet.
    expect(decideField({ base: 'a', pending: 'b' }, 'c', 'b', both, {}).kind).toBe('to-source');
  });

  it('applies each policy to a field both sides changed', () => {
    const at = { worksheet: Date.parse('2025-01-02'), source: Date.parse('2025-01-01') };
    const decide = (conflict: ConflictPolicy) =>
      decideField({ base: 'a' }, 'w', 's', { conflict, direction: 'both' }, at);
    expect(decide('newest')).toEqual({ kind: 'to-source', why: 'policy' });
    expect(decide('source')).toEqual({ kind: 'to-worksheet', why: 'policy' });
    expect(decide('worksheet')).toEqual({ kind: 'to-source', why: 'policy' });
    expect(decide('manual')).toEqual({ kind: 'conflict', why: 'manual' });
  });
});
