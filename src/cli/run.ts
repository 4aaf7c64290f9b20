import { enqueueRun } from '../queue/enqueue-run.ts';
import { positiveInt } from './args.ts';
import { defineCommand, parseCommand } from './command.ts';
import { formatReport, runExitCode } from './format-report.ts';
import type { CliIo } from './io.ts';
import { openRuntime, resolveJobArg } from './open-runtime.ts';
import { reportFailure } from './report-failure.ts';
import { workRunsInProcess } from './work-run.ts';

const RUN = defineCommand({
  name: 'run',
  usage: ['run JOB [--json] [--force] [--concurrency N]'],
  description:
    'Runs a job now, in this process: queues it and works it here until it is done.\n' +
    'JOB is a name in jobs/ (orders) or a file (jobs/orders.yaml).\n' +
    'Exit 0 every row landed, 2 some rows were dead-lettered, 1 failure, 64 misuse.',
  options: {
    json: { type: 'boolean', help: 'print the run and its report as JSON' },
    force: { type: 'boolean', help: "mirror: delete past the job's safety threshold" },
    concurrency: { type: 'string', value: 'N', help: 'batches worked at once (default 4)' },
  },
  positionals: { min: 1, max: 1, label: 'job' },
});

/**
 * `run JOB`: enqueues the job and works it in this process until it is done.
 * Exit 0 when every row landed, 2 when some were dead-lettered, 1 on failure.
 */
export async function main(args: string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(RUN, args, io);
  if (typeof parsed === 'number') return parsed;
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
