/**
 * What a run asserts about itself before it may call itself a success (issue 27 §2):
 * every row read is accounted for by exactly one outcome, and the job's `expect:` holds.
 * Pure functions of the run report; the finalizer acts on what they say.
 */
import type { JobExpectations } from '../job-spec/notify-schemas.ts';
import type { RunReport } from '../state/run-report.ts';

type Counts = Pick<
  RunReport,
  'read' | 'created' | 'updated' | 'unchanged' | 'skipped' | 'deleted' | 'deadLetteredTotal'
>;

/**
 * Why the counts do not add up, or undefined when read = created + updated + unchanged
 * + skipped + dead-lettered. A mirror's deletes are rows the source no longer has: they
 * were never read, so they stand beside the sum, not in it.
 */
export function accountingError(report: Counts): string | undefined {
  const accounted =
    report.created + report.updated + report.unchanged + report.skipped + report.deadLetteredTotal;
  if (accounted === report.read) return undefined;
  const diff = accounted - report.read;
  return (
    `the run's counts do not add up: read ${report.read}, but created ${report.created} + updated ${report.updated} + ` +
    `unchanged ${report.unchanged} + skipped ${report.skipped} + dead-lettered ${report.deadLetteredTotal} = ${accounted} ` +
    `(${Math.abs(diff)} row${Math.abs(diff) === 1 ? '' : 's'} ${diff > 0 ? 'more than read' : 'unaccounted for'}); ` +
    'it is not reported as a success: look at the run in `status` and its dead letters'
  );
}

/** Each expectation of `expect` the run did not meet, in one phrase; empty when all hold. */
export function unmetExpectations(expect: JobExpectations | undefined, report: Counts): string[] {
  if (expect === undefined) return [];
  const unmet: string[] = [];
  const pct = (n: number) => `${(n * 100).toFixed(n < 0.01 ? 2 : 1)}%`;
  if (expect.minRows !== undefined && report.read < expect.minRows)
    unmet.push(`minRows ${expect.minRows}: the run read ${report.read} row${report.read === 1 ? '' : 's'}`);
  if (expect.maxDeadLetterRatio !== undefined && report.deadLetteredTotal > 0) {
    const ratio = report.read === 0 ? 1 : report.deadLetteredTotal / report.read;
    if (ratio > expect.maxDeadLetterRatio)
      unmet.push(
        `maxDeadLetterRatio ${expect.maxDeadLetterRatio}: ${report.deadLetteredTotal} of ${report.read} rows dead-lettered (${pct(ratio)})`,
      );
  }
  if (expect.maxDeleteRatio !== undefined && report.deleted > 0) {
    const ratio = report.deleted / (report.read + report.deleted);
    if (ratio > expect.maxDeleteRatio)
      unmet.push(
        `maxDeleteRatio ${expect.maxDeleteRatio}: ${report.deleted} rows deleted, ${pct(ratio)} of ${report.read + report.deleted}`,
      );
  }
  return unmet;
}
