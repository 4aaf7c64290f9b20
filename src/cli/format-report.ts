import type { RunRecord, RunReport } from '../sync/state/run-store.ts';

const pad = (s: string, n: number) => s.padEnd(n);

/** The run report as a person reads it. */
export function formatReport(record: RunRecord, report: RunReport): string {
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
    `  ${pad('duration', 14)}${(report.durationMs / 1000).toFixed(1)} s`,
  ];
  // Only when it happened: most runs resolve nothing, and a zero line would be noise.
  if (report.resolved > 0)
    lines.push(
      `  resolved ${report.resolved} dead letter${report.resolved === 1 ? '' : 's'} (their rows landed)`,
    );
  if (report.deadLetteredTotal > 0) lines.push(`  see them: rowbridge dlq list --run ${record.runId}`);
  return lines.join('\n');
}

/** Exit code of a finished run: 0 every row landed, 2 some were dead-lettered, 1 failed. */
export function runExitCode(record: RunRecord | undefined, report: RunReport): number {
  if (record === undefined || record.status !== 'completed') return 1;
  return report.deadLetteredTotal > 0 ? 2 : 0;
}
