/**
 * How a run that wrote every row ends: shared by the push finalizer and the pull path,
 * so that `expect:` (docs/expectations.md) judges both the same way.
 */
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import { unmetExpectations } from '../check/run-checks.ts';

/** `completed`, or `unmet` with what the job's `expect:` missed (docs/expectations.md). */
export function verdict(
  spec: JobSpec,
  counts: Parameters<typeof unmetExpectations>[1],
): { status: 'completed' } | { status: 'unmet'; message: string; category: string } {
  const unmet = unmetExpectations(spec.expect, counts);
  if (unmet.length === 0) return { status: 'completed' };
  return { status: 'unmet', message: `expectation not met: ${unmet.join('; ')}`, category: 'expectation' };
}
