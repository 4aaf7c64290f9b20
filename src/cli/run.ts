import path from 'node:path';
import { readFile } from 'node:fs/promises';
import type { Runtime } from '../queue/runtime-types.ts';
import { positiveInt } from './args.ts';
import { defineCommand, parseCommand } from './command.ts';
import { findUnfinishedRun } from '../queue/resume-run.ts';
import { formatFailure, formatReport, runExitCode } from './format-report.ts';
import { cmd } from './io.ts';
import type { CliIo } from './io.ts';
import { openRuntime, resolveJobArg } from './open-runtime.ts';
import { namePlatformHost, reportFailure } from './report-failure.ts';
import { createRedisWatch } from './redis-watch.ts';
import { ensureRedisReachable } from './redis-reachable.ts';
import { loadSettings } from '../../config/settings.ts';

/** How long `run` tries to reach Redis before saying it cannot (well inside 5 s). */
const FIRST_REACH_MS = 3_000;
import { jobFileIn } from './job-file.ts';
import { workRunsInProcess } from './work-run.ts';
import { localQueuePrefix, startLocalRun } from './local-run.ts';

const RUN = defineCommand({
  name: 'run',
  usage: ['run JOB [--json] [--force] [--full] [--fresh] [--reset-cursor] [--concurrency N]'],
  description:
    'Runs a job now, in this process and with its environment, in queues of its own that no\n' +
    'worker takes from; when a worker (or another run) is working the job, says so, exit 75.\n' +
    'A run of the job that did not finish (killed, interrupted, or failed on a cause since\n' +
    'fixed) is resumed under its own id instead: rows it already wrote are not written again.\n' +
    'JOB is a name in jobs/ (orders) or a file (jobs/orders.yaml).\n' +
    'Exit 0 every row landed, 2 some rows were dead-lettered, 3 an expectation was not met,\n' +
    '1 failure, 64 misuse,\n' +
    '75 the job is being worked elsewhere, 130 interrupted (Ctrl-C; the run stays resumable).',
  options: {
    json: { type: 'boolean', help: 'print the run and its report as JSON' },
    force: { type: 'boolean', help: "mirror: delete past the job's safety threshold" },
    full: {
      type: 'boolean',
      help: 'compare every row with what the worksheet holds (repairs it), not saved hashes',
    },
    fresh: { type: 'boolean', help: 'give up the unfinished run of the job and start anew' },
    'reset-cursor': {
      type: 'boolean',
      help: "forget the job's incremental cursor: the run reads from the beginning",
    },
    concurrency: { type: 'string', value: 'N', help: 'batches worked at once (default 4)' },
  },
  positionals: { min: 1, max: 1, label: 'job' },
});

/**
 * `run JOB`: resumes the job's unfinished run or queues a new one, and works that run
 * (only that one) in this process until it is done.
 * Exit 0 when every row landed, 2 when some were dead-lettered, 1 on failure.
 */
export async function main(args: string[], io: CliIo): Promise<number> {
  // A postgres-cdc job streams: its own consumer reads until caught up (docs/cdc.md).
  if (await mayBeCdcRun(args, io)) {
    const cdc = await import('./cdc.ts');
    if (await cdc.isCdcRun(args, io)) return cdc.runCdc(args, io);
  }
  const parsed = parseCommand(RUN, args, io);
  if (typeof parsed === 'number') return parsed;
  const job = resolveJobArg(parsed.positionals[0]!, io);
  try {
    // A Redis that never answered is said at once: the long wait is for one that goes
    // away during the run, and there is no run yet to keep resumable.
    await ensureRedisReachable(loadSettings(io.env).redisUrl, FIRST_REACH_MS);
  } catch (err) {
    return reportFailure(err, io);
  }
  const reportedRuns = new Set<string>();
  const rt = openRuntime(io, {
    quiet: parsed.values.json === true,
    interactive: true,
    reportedRuns,
    ...(job.jobsDir ? { jobsDir: job.jobsDir } : {}),
  });
  try {
    const concurrency = positiveInt(parsed.values.concurrency, 'concurrency');
    // Redis restarting as the command starts is waited for, like one restarting mid-run.
    // The run lives in queues of its own, which no worker listens to (./local-run.ts).
    const local: Runtime = { ...rt, queuePrefix: localQueuePrefix(rt.queuePrefix, job.name) };
    const { runId, resumed } = await createRedisWatch(rt, io, 'no run was started').outlast(() =>
      startLocalRun(local, job.name, {
        command: cmd(io),
        ...(parsed.values.force === true ? { force: true } : {}),
        ...(parsed.values.full === true ? { full: true } : {}),
        ...(parsed.values.fresh === true ? { fresh: true } : {}),
        ...(parsed.values['reset-cursor'] === true ? { resetCursor: true } : {}),
      }),
    );
    reportedRuns.add(runId);
    if (resumed !== undefined) {
      const done = await rt.runs.report(runId);
      io.err(
        `resuming run ${runId} (${resumed.status}${resumed.message ? `: ${resumed.message}` : ''}); ` +
          `${done.created + done.updated + done.unchanged + done.skipped} rows already done are not written again ` +
          '(--fresh starts anew)',
      );
    }
    const [result] = await workRunsInProcess(local, [runId], io, {
      ...(concurrency === undefined ? {} : { concurrency }),
      showProgress: parsed.values.json !== true,
      label: `run ${job.name}`,
    });
    const { report } = result!;
    let { record } = result!;
    if (record?.status === 'failed' && record.message !== undefined) {
      const prefix = await rt.loadJob(job.name).then(
        ({ spec }) => spec.target?.app?.credentialsEnvPrefix,
        () => undefined,
      );
      record = { ...record, message: namePlatformHost(record.message, io.env, prefix) };
    }
    // Its own notifications go out before the command ends; what fails is the workers' to retry.
    const { deliverOwnNotifications } = await import('../queue/notify-delivery.ts');
    for (const line of await deliverOwnNotifications(rt, runId)) io.err(line);
    if (parsed.values.json === true) io.out(JSON.stringify({ run: record, report }, null, 2));
    else if (record?.status === 'failed' && io.isTty) {
      const resumable = (await findUnfinishedRun(rt, job.name))?.runId === runId;
      io.err(formatFailure(record, report, { command: cmd(io), resumable }));
    } else if (record !== undefined) io.out(formatReport(record, report, cmd(io)));
    return runExitCode(record, report);
  } catch (err) {
    return reportFailure(err, io);
  } finally {
    await rt.close();
  }
}

/**
 * Whether `run` may be for a postgres-cdc job: `--resnapshot`, or a job file that says
 * so, read as text. Only then are the replication client and its modules loaded: an
 * import's run process stays as small as before change capture existed.
 */
async function mayBeCdcRun(args: readonly string[], io: CliIo): Promise<boolean> {
  if (args.includes('--resnapshot')) return true;
  const arg = args.find((a) => !a.startsWith('-'));
  if (arg === undefined) return false;
  try {
    const job = resolveJobArg(arg, io);
    const folder = job.jobsDir ?? loadSettings(io.env).jobsDir ?? path.join(io.cwd, 'jobs');
    return (await readFile(jobFileIn(folder, job.name), 'utf8')).includes('postgres-cdc');
  } catch {
    return false;
  }
}
