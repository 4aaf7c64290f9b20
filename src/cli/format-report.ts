import type { RunRecord, RunReport } from '../sync/state/run-store.ts';

const pad = (s: string, n: number) => s.padEnd(n);

/** The run report as a person reads it. */
export function formatReport(record: RunRecord, report: RunReport, command = 'rowbridge'): string {
  const dead = Object.entries(report.deadLettered)
    .map(([category, n]) => `${category} ${n}`)
    .join(', ');
  const lines = [
    `run ${record.runId} (${record.job}): ${record.status}${record.message ? ` - ${record.message}` : ''}`,
    `  ${pad('read', 14)}${report.read}`,
    `  ${pad('created', 14)}${report.created}`,
    `  ${pad('updated', 14)}${report.updated}`,
    `  ${pad('unchanged', 14)}${report.unchanged}`,
    `  ${pad('skipped', 14)}${report.skipped}`,
    `  ${pad('deleted', 14)}${report.deleted}`,
    `  ${pad('dead-lettered', 14)}${report.deadLetteredTotal}${dead ? ` (${dead})` : ''}`,
    `  ${pad('requests', 14)}${report.requests} (throttled ${report.throttled}, retries ${report.retries})`,
    `  ${pad('batches', 14)}${report.batches}`,
    ...(report.keyMatch === undefined
      ? []
      : [
          `  ${pad('keys', 14)}${report.keyMatch.scan ? 'full scan' : 'key index'} (${report.keyMatch.reason}): ${report.keyMatch.detail}`,
        ]),
    `  ${pad('duration', 14)}${(report.durationMs / 1000).toFixed(1)} s`,
  ];
  // Only when it happened: most runs resolve nothing, and a zero line would be noise.
  if (report.resolved > 0)
    lines.push(
      `  resolved ${report.resolved} dead letter${report.resolved === 1 ? '' : 's'} (their rows landed)`,
    );
  if (report.deadLetteredTotal > 0) lines.push(`  see them: ${command} dlq list --run ${record.runId}`);
  return lines.join('\n');
}

/**
 * Exit code of a finished run (io.ts EXIT): 0 every row landed, 2 some were
 * dead-lettered, 3 an expectation was not met, 1 failed.
 */
export function runExitCode(record: RunRecord | undefined, report: RunReport): number {
  if (record?.status === 'unmet') return 3;
  if (record === undefined || record.status !== 'completed') return 1;
  return report.deadLetteredTotal > 0 ? 2 : 0;
}

/**
 * A failed run as a person at a terminal reads it: one line saying what failed, one hint
 * saying what to do, and the counts only when the run got as far as reading rows.
 */
export function formatFailure(
  record: RunRecord,
  report: RunReport,
  next: { command: string; resumable: boolean },
): string {
  const lines = [`run ${record.runId} (${record.job}) failed: ${record.message ?? 'no reason was recorded'}`];
  const again = `${next.command} run ${record.job}`;
  lines.push(
    next.resumable
      ? `hint: fix the cause, then \`${again}\` resumes this run (rows already written are not written again; --fresh starts anew)`
      : `hint: fix the cause, then \`${again}\` again`,
  );
  if (report.read > 0 || report.deadLetteredTotal > 0) {
    const written = report.created + report.updated;
    lines.push(
      `  read ${report.read}, written ${written} (created ${report.created}, updated ${report.updated}), unchanged ${report.unchanged}, dead-lettered ${report.deadLetteredTotal}; \`${next.command} status ${record.runId}\` has the report`,
    );
  }
  return lines.join('\n');
}
