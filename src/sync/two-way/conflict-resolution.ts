/**
 * What a person may decide about a two-way conflict (docs/two-way.md), one rule for every
 * place that resolves one: a conflict of fields takes the table's values, the worksheet's,
 * or one VALUE for both sides when it holds a single field; records sharing a key cannot
 * be resolved by a value (the key must change on one side). The decision is stored with
 * the conflict and written by the job's next run.
 */
import type { Conflict } from './link-store.ts';

/** What a person chose: a side, or one value for both sides. */
export type ConflictChoice = 'source' | 'worksheet' | { value: string };

/** The resolution to store, or why this conflict cannot take it. */
export function conflictResolution(
  conflict: Conflict,
  choice: ConflictChoice,
): { take: NonNullable<Conflict['take']> } | { error: string } {
  if (conflict.kind !== 'fields')
    return {
      error: `records sharing the key ${JSON.stringify(conflict.matchKey)} cannot be resolved by a value: change or fill the key on one side`,
    };
  if (choice === 'source') return { take: { source: true } };
  if (choice === 'worksheet') return { take: { worksheet: true } };
  const fields = conflict.fields ?? [];
  if (fields.length !== 1)
    return {
      error: `a value sets one field, and this conflict has ${fields.length} (${fields.map((f) => f.field).join(', ')}): take source or worksheet`,
    };
  return { take: { value: choice.value } };
}

/** A stored resolution in words: `the table value`, `the worksheet value`, or the value. */
export function describeResolution(take: NonNullable<Conflict['take']>): string {
  if ('source' in take) return 'the table value';
  if ('worksheet' in take) return 'the worksheet value';
  return JSON.stringify(take.value);
}
