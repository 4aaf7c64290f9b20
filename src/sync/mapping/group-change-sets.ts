/**
 * Batch update writes ONE set of fields to ALL rowIds (platform notes §2 [C]), so rows
 * can share a batch only when their change sets are identical.
 */
import type { FieldValue } from '../../api/types.ts';

export interface ChangeSetGroup {
  /** The fields to write, sorted by field id. */
  fields: FieldValue[];
  /** Rows that get exactly these fields, in input order. */
  rowIds: string[];
}

function signatureOf(fields: readonly FieldValue[]): { sorted: FieldValue[]; signature: string } {
  const sorted = [...fields].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const signature = JSON.stringify(sorted.map((f) => [f.id, f.type ?? null, f.value ?? null]));
  return { sorted, signature };
}

/** Groups updates whose change sets are equal (same fields, values and field-value types). Empty change sets are dropped. */
export function groupChangeSets(
  updates: ReadonlyArray<{ rowId: string; changed: readonly FieldValue[] }>,
): ChangeSetGroup[] {
  const groups = new Map<string, ChangeSetGroup>();
  // A set per group: a batch job of 1,000 rows can put hundreds of rows in one group.
  const members = new Map<string, Set<string>>();
  for (const update of updates) {
    if (update.changed.length === 0) continue;
    const { sorted, signature } = signatureOf(update.changed);
    const group = groups.get(signature);
    if (group === undefined) {
      groups.set(signature, { fields: sorted, rowIds: [update.rowId] });
      members.set(signature, new Set([update.rowId]));
    } else if (!members.get(signature)!.has(update.rowId)) {
      group.rowIds.push(update.rowId);
      members.get(signature)!.add(update.rowId);
    }
  }
  return [...groups.values()];
}
