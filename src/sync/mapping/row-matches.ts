/**
 * Compares a mapped payload with the worksheet row it would update, so an unchanged row
 * is not written and a changed one sends only the fields that really changed.
 */
import type { FieldValue } from '../../api/types.ts';
import { keyOf } from './compose-key.ts';
import type { NormalisedRow } from '../../api/types.ts';
import { canonicalValue } from './canonical-value.ts';
import type { MappingPlan, PlannedField } from './plan-types.ts';

export interface RowComparison {
  /** No mapped field differs from the row. */
  same: boolean;
  /** The mapped field values that differ, in mapping order. */
  changed: FieldValue[];
}

function readValue(field: PlannedField, row: NormalisedRow): unknown {
  const values = row.values;
  if (Object.hasOwn(values, field.id)) return values[field.id];
  return field.alias !== undefined ? values[field.alias] : undefined;
}

/**
 * `fields` must be resolved (after resolveReferences): relation and member values are
 * compared as ids. A field value the plan does not know counts as changed.
 */
export function rowMatches(
  plan: MappingPlan,
  fields: readonly FieldValue[],
  existing: NormalisedRow,
): RowComparison {
  const changed: FieldValue[] = [];
  for (const fv of fields) {
    const field = plan.byTarget.get(fv.id);
    if (field === undefined) {
      changed.push(fv);
      continue;
    }
    const wanted = canonicalValue(field, fv.value, plan.targetClock);
    const current = canonicalValue(field, readValue(field, existing), plan.targetClock);
    if (wanted !== current) changed.push(fv);
  }
  return { same: changed.length === 0, changed };
}

/** The canonical key of an existing row, comparable with MappedRow.key; undefined when the plan has no key or the row's key is empty. */
export function keyOfRow(plan: MappingPlan, row: NormalisedRow): string | undefined {
  return keyOf(plan, (field) => readValue(field, row));
}
