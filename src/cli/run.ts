import { enqueueRun } from '../queue/enqueue-run.ts';
import { parseCliArgs, positiveInt, UsageError } from './args.ts';
import { formatReport, runExitCode } from './format-report.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { openRuntime, resolveJobArg } from './open-runtime.ts';
import { reportFailure } from './report-failure.ts';
import { workRunsInProcess } from './work-run.ts';

const USAGE = 'usage: rowbridge run JOB [--json] [--force] [--concurrency N]';

/**
 * `run JOB`: enqueues the job and works it in this process until it is done.
 * Exit 0 when every row landed, 2 when some were dead-lettered, 1 on failure.
 */
export async function main(args: string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseCliArgs(args, {
      json: { type: 'boolean' },
      force: { type: 'boolean' },
      concurrency: { type: 'string' },
    });
    if (parsed.positionals.length !== 1) throw new UsageError('run takes exactly one job');
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}`);
    return EXIT.usage;
  }
  const job = resolveJobArg(parsed.positionals[0]!, io);
  const rt = openRuntime(io, {
    quiet: parsed.values.json === true,
    interactive: true,
    ...(job.jobsDir ? { jobsDir: job.jobsDir } : {}),
  });
  try {
    const concurrency = positiveInt(parsed.values.concurrency, 'concurrency');
    const runId = await enqueueRun(rt, job.name, {
      trigger: 'cli',
      ...(parsed.values.force ? { force: true } : {}),
    });
    const [result] = await workRunsInProcess(rt, [runId], io, {
      ...(concurrency === undefined ? {} : { concurrency }),
      showProgress: parsed.values.json !== true,
      label: `run ${job.name}`,
    });
    const { record, report } = result!;
    if (parsed.values.json === true) io.out(JSON.stringify({ run: record, report }, null, 2));
    else if (record !== undefined) io.out(formatReport(record, report));
    return runExitCode(record, report);
  } catch (err) {
    return reportFailure(err, io);
  } finally {
    await rt.close();
  }
}
