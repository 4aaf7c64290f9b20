/**
 * What a two-way job's `fields` say per field besides the mapping: its conflict policy
 * and its direction. Read by the two-way engine and by the run's preparation, which
 * must know the fields a two-way job writes into the worksheet.
 */
import type { JobSpec } from './job-spec-schema.ts';

/** How a field's differing edits on both sides are decided. */
export type ConflictPolicy = 'newest' | 'source' | 'worksheet' | 'manual';

/** Which way a two-way field is copied. */
export type FieldDirection = 'both' | 'to-worksheet' | 'to-source';

/** Per-field `conflict` and `direction`, from the job's `fields` as written. */
export function fieldOptions(
  spec: JobSpec,
  target: string,
): { conflict?: ConflictPolicy; direction?: FieldDirection } {
  const raw = (spec.fields as Record<string, unknown>)[target];
  if (typeof raw !== 'object' || raw === null) return {};
  const o = raw as { conflict?: ConflictPolicy; direction?: FieldDirection };
  return {
    ...(o.conflict === undefined ? {} : { conflict: o.conflict }),
    ...(o.direction === undefined ? {} : { direction: o.direction }),
  };
}

/** The targets a two-way job writes into the worksheet (a to-source field is only read there). */
export function worksheetWrittenTargets(spec: JobSpec): Set<string> {
  return new Set(
    spec.mappings.filter((m) => fieldOptions(spec, m.target).direction !== 'to-source').map((m) => m.target),
  );
}
