/**
 * The key of a row: the canonical value of its key field, or, for a composite key
 * (`key: [customer_no, region]`), the canonical values of its parts as one JSON array,
 * so that no value can be mistaken for a separator. A single key keeps its plain form,
 * so indexes written before composite keys existed stay valid.
 */
import { canonicalValue } from './canonical-value.ts';
import type { MappingPlan, PlannedField } from './plan-types.ts';

/** The plan's key fields, in the order the job spec names them. */
export function keyFields(plan: MappingPlan): PlannedField[] {
  return plan.keyIndexes.map((i) => plan.fields[i]).filter((f): f is PlannedField => f !== undefined);
}

/** One key from the parts' canonical values; undefined when any part is empty. */
export function composeKey(parts: readonly string[]): string | undefined {
  if (parts.length === 0 || parts.some((p) => p === '')) return undefined;
  return parts.length === 1 ? parts[0] : JSON.stringify(parts);
}

/** The parts of a key made by {@link composeKey} for a plan with `count` key fields. */
export function keyParts(key: string, count: number): string[] {
  if (count === 1) return [key];
  const parts: unknown = JSON.parse(key);
  if (!Array.isArray(parts) || parts.length !== count) throw new Error(`not a key of ${count} parts: ${key}`);
  return parts.map(String);
}

/** The key of values read by `read(field)` (a raw record, a worksheet row). */
export function keyOf(plan: MappingPlan, read: (field: PlannedField) => unknown): string | undefined {
  const fields = keyFields(plan);
  if (fields.length === 0) return undefined;
  return composeKey(fields.map((f) => canonicalValue(f, read(f), plan.targetClock)));
}
