/**
 * A job and its runs in a few words and figures, as the jobs and job pages show them:
 * where it reads, where it writes, how, and whether its recent runs are failing.
 */
import type { JobSpec } from '../../sync/job-spec/job-spec-schema.ts';
import type { RunHistoryItem } from '../../sync/state/run-history.ts';
import type { RunReport } from '../../sync/state/run-store.ts';

/** Failed runs in a row from which a job is marked unhealthy. */
export const DEFAULT_UNHEALTHY_AFTER = 3;

/** The host of a URL with `${ENV}` references in it, or the text before any path. */
function hostOf(url: string): string {
  try {
    return new URL(url.replace(/\$\{[^}]*\}/g, 'x')).host || url;
  } catch {
    return url.split('/')[2] ?? url;
  }
}

/** `csv ./data/orders.csv`, `http helpdesk.example.com`, `postgres table orders (ORDERS_DB)`. */
export function sourceSummary(spec: JobSpec): string {
  const s = spec.source;
  switch (s.type) {
    case 'csv':
    case 'ndjson':
    case 'json':
      return `${s.type} ${s.path}`;
    case 'http':
      // Only the host: the path and query may carry references an operator needn't see here.
      return `http ${hostOf(s.url)}`;
    case 'postgres':
    case 'mysql':
      return `${s.type} ${s.table === undefined ? 'query' : `table ${s.table}`} (${s.urlEnv})`;
    case 'postgres-cdc':
      return `postgres-cdc table ${s.table}, slot ${s.slot} (${s.urlEnv})`;
    case 'worksheet':
      return `worksheet ${s.worksheet}`;
    case 'singer':
      return `singer stream ${s.stream}`;
  }
}

/** `worksheet orders` or, for a pull job, `postgres reporting.orders`, `csv ./out.csv`. */
export function targetSummary(spec: JobSpec): string {
  if (spec.target !== undefined) return `worksheet ${spec.target.worksheet}`;
  const sink = spec.sink;
  if (sink === undefined) return '';
  return sink.type === 'postgres' ? `postgres ${sink.table}` : `${sink.type} ${sink.path}`;
}

/** The target's mode, or `pull` for a job with a sink. */
export function modeOf(spec: JobSpec): string {
  return spec.target?.mode ?? 'pull';
}

/** Rows written: created + updated, as status and the report count them (a pull's sink writes count as created; deletes apart). */
export function rowsWritten(report: RunReport): number {
  return report.created + report.updated;
}

/** Rows written per second of the run's duration (0 for a run without a duration). */
export function rowsPerSecond(report: RunReport): number {
  return report.durationMs > 0 ? rowsWritten(report) / (report.durationMs / 1000) : 0;
}

/**
 * How many of the newest finished runs failed in a row. Runs still going and runs
 * skipped because another was active say nothing about the job's health: passed over.
 */
export function failureStreak(runs: readonly RunHistoryItem[]): number {
  let streak = 0;
  for (const { record } of runs) {
    if (record.status === 'failed') streak += 1;
    else if (record.status === 'completed') break;
  }
  return streak;
}

/** The newest run that is not a skip, for the "last run" column. */
export function lastRun(runs: readonly RunHistoryItem[]): RunHistoryItem | undefined {
  return runs.find(({ record }) => record.status !== 'skipped') ?? runs[0];
}
