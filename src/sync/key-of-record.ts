import { canonicalValue } from './mapping/canonical-value.ts';
import type { MappingPlan } from './mapping/plan-types.ts';

/**
 * The canonical key of a raw source record, by the same rule as mapped keys, for
 * records the mapping refused (a mirror must still count their rows as present).
 */
export function keyOfRecord(plan: MappingPlan, data: Readonly<Record<string, unknown>>): string | undefined {
  if (plan.keyIndex === undefined) return undefined;
  const field = plan.fields[plan.keyIndex];
  if (field === undefined) return undefined;
  const raw = field.hasConstant ? field.constant : field.column === undefined ? undefined : data[field.column];
  try {
    const key = canonicalValue(field, raw, plan.targetClock);
    return key === '' ? undefined : key;
  } catch {
    return undefined;
  }
}
