import type { Logger } from '../ground/logger.ts';
import type { PreparedRun } from '../sync/prepare/prepare-run.ts';
import { runTwoWay } from '../sync/two-way/two-way-run.ts';
import type { TwoWayReport } from '../sync/two-way/two-way-run.ts';
import type { Runtime } from './runtime-types.ts';
import { deadLetterTwoWay } from './two-way-dead-letters.ts';

/** How long a two-way run's report is kept (the run record itself keeps the totals). */
const REPORT_TTL_S = 30 * 86_400;

/**
 * A two-way run (sync/two-way/): one process reads both sides and writes both, no fan-out,
 * so the run processor only marks it and hands over. The full report (each side's
 * writes, conflicts, held deletes, records kept) is stored beside the run for `status`.
 */
export async function runTwoWayJob(
  rt: Runtime,
  run: PreparedRun,
  runId: string,
  startedAt: string | undefined,
  log: Logger,
): Promise<TwoWayReport> {
  await rt.runs.update(runId, {
    status: 'running',
    startedAt: startedAt ?? new Date().toISOString(),
    mode: 'two-way',
    worksheet: run.prepared!.structure.name,
  });
  const report = await runTwoWay({
    spec: run.spec,
    file: run.file,
    client: run.client,
    prepared: run.prepared!,
    redis: rt.redis,
    prefix: rt.statePrefix,
    env: rt.env,
    log,
    clientFor: (prefix) => rt.clientFor(prefix),
  });
  await rt.redis.set(twoWayReportKey(rt.statePrefix, runId), JSON.stringify(report), 'EX', REPORT_TTL_S);
  await deadLetterTwoWay(rt, run.spec.name, runId, report.rejected);
  await rt.runs.addWritten(runId, report.worksheet.created + report.source.created);
  await rt.runs.update(runId, {
    status: 'completed',
    read: report.read.source + report.read.worksheet,
    deleted: report.worksheet.deleted + report.source.deleted,
    finishedAt: new Date().toISOString(),
  });
  log.info({ twoWay: report }, 'two-way run finished');
  return report;
}

/** Where a two-way run's report is kept. */
export function twoWayReportKey(statePrefix: string, runId: string): string {
  return `${statePrefix}:twoway-report:${runId}`;
}
