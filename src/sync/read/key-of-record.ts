import { keyOf } from '../mapping/compose-key.ts';
import type { MappingPlan } from '../mapping/plan-types.ts';

/**
 * The canonical key of a raw source record, by the same rule as mapped keys, for
 * records the mapping refused (a mirror must still count their rows as present).
 */
export function keyOfRecord(plan: MappingPlan, data: Readonly<Record<string, unknown>>): string | undefined {
  try {
    return keyOf(plan, (field) =>
      field.hasConstant
        ? field.constant
        : field.column === undefined
          ? undefined
          : field.transform === undefined
            ? data[field.column]
            : field.transform(data[field.column]),
    );
  } catch {
    return undefined;
  }
}
