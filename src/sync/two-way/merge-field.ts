/**
 * The merge decision of one field of one linked record: a pure function of the last
 * synced value (as hashes), both sides' current values (hashes) and the field's policy.
 * A side is taken to have changed a field only when its value differs from what the
 * last run left there: rowbridge's own writes come back equal to that and are never
 * taken for edits (the platform names no author for API writes).
 */

import type { ConflictPolicy, FieldDirection } from '../job-spec/two-way-options.ts';

/** The field's state after the last run. */
export interface FieldBase {
  /** Hash of the value both sides held after the last completed sync; absent before the first. */
  base?: string | undefined;
  /**
   * Hash of the value a run decided to write and may not have written (it was stopped
   * after recording its intent): a side holding it did not edit the field.
   */
  pending?: string | undefined;
}

/** When each side last changed the record (epoch ms), for `newest`. */
export interface MergeTimes {
  worksheet?: number | undefined;
  source?: number | undefined;
}

/** What the run does with the field. */
export type FieldDecision =
  /** Both sides hold the same value: nothing to write, the base becomes that value. */
  | { kind: 'same' }
  /** Copy the source's value into the worksheet. */
  | { kind: 'to-worksheet'; why: DecisionReason }
  /** Copy the worksheet's value into the table. */
  | { kind: 'to-source'; why: DecisionReason }
  /** Both changed, no policy decides: write neither side, record a conflict. */
  | { kind: 'conflict'; why: 'manual' | 'no-times' };

/** Why a value is copied: one side changed it, a policy settled a conflict, or an interrupted write resumes. */
export type DecisionReason = 'changed' | 'policy' | 'direction' | 'resume';

/**
 * Decides one field. `worksheet` and `source` are the hashes of each side's current
 * value in the comparison form (field-values.ts). Without a base (records matched by
 * key, never synced) differing values count as changed on both sides. `newest` breaks
 * a tie in favour of the source, and without both times records a conflict.
 */
export function decideField(
  base: FieldBase,
  worksheet: string,
  source: string,
  policy: { conflict: ConflictPolicy; direction: FieldDirection },
  times: MergeTimes,
): FieldDecision {
  if (worksheet === source) return { kind: 'same' };
  if (policy.direction === 'to-worksheet') return { kind: 'to-worksheet', why: 'direction' };
  if (policy.direction === 'to-source') return { kind: 'to-source', why: 'direction' };
  const changed = (value: string) =>
    base.base === undefined || (value !== base.base && value !== base.pending);
  const worksheetChanged = changed(worksheet);
  const sourceChanged = changed(source);
  if (!worksheetChanged && !sourceChanged) {
    // One side holds the base, the other the value a stopped run was writing: finish it.
    return source === base.pending
      ? { kind: 'to-worksheet', why: 'resume' }
      : { kind: 'to-source', why: 'resume' };
  }
  if (!worksheetChanged) return { kind: 'to-worksheet', why: 'changed' };
  if (!sourceChanged) return { kind: 'to-source', why: 'changed' };
  switch (policy.conflict) {
    case 'source':
      return { kind: 'to-worksheet', why: 'policy' };
    case 'worksheet':
      return { kind: 'to-source', why: 'policy' };
    case 'manual':
      return { kind: 'conflict', why: 'manual' };
    case 'newest': {
      if (times.worksheet === undefined || times.source === undefined)
        return { kind: 'conflict', why: 'no-times' };
      return times.worksheet > times.source
        ? { kind: 'to-source', why: 'policy' }
        : { kind: 'to-worksheet', why: 'policy' };
    }
  }
}
