import { cdcLagOf, describeCdcLag } from '../sync/cdc/cdc-lag.ts';
import type { CdcLag } from '../sync/cdc/cdc-lag.ts';
import { createCdcState } from '../sync/cdc/cdc-state.ts';
import type { RunRecord, RunReport } from '../sync/state/run-store.ts';
import { findUnfinishedRun } from '../queue/resume-run.ts';
import { positiveInt, UsageError } from './args.ts';
import { defineCommand, parseCommand, usageFailure } from './command.ts';
import { formatReport } from './format-report.ts';
import { cmd, EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { withRuntime } from './open-runtime.ts';

const STATUS = defineCommand({
  name: 'status',
  usage: ['status [RUN] [--job NAME] [--limit N] [--json]'],
  description:
    'Without RUN: the latest runs, newest first, one line each, then the lag of change streams\n' +
    '(postgres-cdc; a WARNING line over ROWBRIDGE_CDC_LAG_WARN_SECONDS / _BYTES). With RUN: its report.\n' +
    'Exit 0, 1 when the run is unknown or Redis cannot be reached.',
  options: {
    job: { type: 'string', value: 'NAME', help: 'only the runs of this job' },
    limit: { type: 'string', value: 'N', help: 'how many runs to list (default 20)' },
    json: { type: 'boolean', help: 'print runs and reports as JSON' },
  },
  positionals: { min: 0, max: 1, label: 'run' },
});

/** WRITTEN is created + updated, as in the report and on the dashboard; UNCHANGED apart. */
const COLUMNS = [
  'RUN',
  'JOB',
  'STATUS',
  'CREATED',
  'READ',
  'WRITTEN',
  'UNCHANGED',
  'DEAD',
  'MESSAGE',
] as const;

/** The runs as a table with a header line; numbers right-aligned, the message last and unpadded. */
export function formatRunTable(
  rows: ReadonlyArray<{ run: RunRecord; report: RunReport; resumable?: boolean }>,
): string {
  const cells = rows.map(({ run, report, resumable }) => [
    run.runId,
    run.job,
    resumable === true ? `${run.status}, resumable` : run.status,
    run.createdAt.replace('T', ' ').replace(/\.\d+Z$|Z$/, 'Z'),
    String(run.read ?? report.read),
    String(report.created + report.updated),
    String(report.unchanged + report.skipped),
    String(report.deadLetteredTotal),
    run.message ?? '',
  ]);
  const all = [[...COLUMNS], ...cells];
  const widths = COLUMNS.map((_, i) => Math.max(...all.map((row) => row[i]!.length)));
  const numeric = new Set([4, 5, 6, 7]);
  return all
    .map((row) =>
      row
        .map((cell, i) =>
          i === row.length - 1 ? cell : numeric.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** `status [RUN]`: one run's report, or the latest runs. */
export async function main(args: string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(STATUS, args, io);
  if (typeof parsed === 'number') return parsed;
  const { json, job } = parsed.values;
  let limit: number;
  try {
    limit = positiveInt(parsed.values.limit, 'limit') ?? 20;
    if (parsed.positionals.length > 0 && (job !== undefined || parsed.values.limit !== undefined))
      throw new UsageError('--job and --limit list runs: give them without RUN');
  } catch (err) {
    return usageFailure(STATUS, err, io);
  }
  return withRuntime(io, { quiet: true }, async (rt) => {
    const runId = parsed.positionals[0];
    if (runId !== undefined) {
      const record = await rt.runs.get(runId);
      if (record === undefined) {
        io.err(`no run ${runId} (\`${cmd(io)} status\` lists the latest runs)`);
        return EXIT.failure;
      }
      const report = await rt.runs.report(runId);
      io.out(json === true ? JSON.stringify({ run: record, report }, null, 2) : formatReport(record, report));
      return EXIT.ok;
    }
    const runs = await rt.runs.list({ limit, ...(job ? { job } : {}) });
    // The run of each job that `run JOB` would resume (killed, interrupted or failed).
    const unfinished = new Set<string>();
    for (const name of new Set(runs.map((r) => r.job))) {
      const run = await findUnfinishedRun(rt, name);
      if (run !== undefined) unfinished.add(run.runId);
    }
    // Change streams: lag as their consumers last saved it, whichever process holds them.
    const streams = await createCdcState({ redis: rt.redis, prefix: rt.statePrefix }).statuses();
    const lags = new Map<string, CdcLag>();
    for (const [name, stream] of streams)
      if (job === undefined || name === job) lags.set(name, cdcLagOf(name, stream, rt.settings));
    const withReports = await Promise.all(
      runs.map(async (run) => {
        const lag = run.trigger === 'cdc' ? lags.get(run.job) : undefined;
        return {
          run,
          report: await rt.runs.report(run.runId),
          ...(unfinished.has(run.runId) ? { resumable: true } : {}),
          ...(lag === undefined ? {} : { cdcLag: lag }),
        };
      }),
    );
    if (json === true) io.out(JSON.stringify(withReports, null, 2));
    else if (runs.length === 0) io.out(job === undefined ? 'no runs yet' : `no runs of job ${job} yet`);
    else {
      io.out(formatRunTable(withReports));
      if (unfinished.size > 0)
        io.out(`a resumable run is resumed by \`${cmd(io)} run JOB\` (\`--fresh\` starts anew)`);
    }
    if (json !== true && lags.size > 0) io.out(formatCdcLags([...lags.values()]));
    return EXIT.ok;
  });
}

/** `change capture:` then one line per stream, and a `WARNING` line per warning. */
export function formatCdcLags(lags: readonly CdcLag[]): string {
  const lines = ['change capture:'];
  for (const lag of lags) {
    lines.push(`  ${lag.job}: ${describeCdcLag(lag)} (reported ${lag.reportedAt})`);
    for (const warning of lag.warnings) lines.push(`  WARNING ${lag.job}: ${warning}`);
  }
  return lines.join('\n');
}
