import { enqueueRun } from '../queue/enqueue-run.ts';
import { parseCliArgs, positiveInt, UsageError } from './args.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { openRuntime, resolveJobArg } from './open-runtime.ts';
import { reportFailure } from './report-failure.ts';

const USAGE = 'usage: rowbridge enqueue JOB [--from X --to Y [--chunks N]] [--force] [--json]';

/** `enqueue JOB`: queues a run for the workers and prints its id. */
export async function main(args: string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseCliArgs(args, {
      force: { type: 'boolean' },
      json: { type: 'boolean' },
      from: { type: 'string' },
      to: { type: 'string' },
      chunks: { type: 'string' },
    });
    if ((parsed.values.from === undefined) !== (parsed.values.to === undefined))
      throw new UsageError('--from and --to go together');
    if (parsed.positionals.length !== 1) throw new UsageError('enqueue takes exactly one job');
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}`);
    return EXIT.usage;
  }
  const job = resolveJobArg(parsed.positionals[0]!, io);
  const rt = openRuntime(io, { quiet: true, ...(job.jobsDir ? { jobsDir: job.jobsDir } : {}) });
  try {
    const { from, to } = parsed.values;
    const range =
      from === undefined || to === undefined
        ? undefined
        : { from, to, chunks: positiveInt(parsed.values.chunks, 'chunks') ?? 4 };
    const runId = await enqueueRun(rt, job.name, {
      trigger: 'enqueue',
      ...(parsed.values.force ? { force: true } : {}),
      ...(range === undefined ? {} : { range }),
    });
    io.out(parsed.values.json === true ? JSON.stringify({ runId }) : `enqueued run ${runId}`);
    return EXIT.ok;
  } catch (err) {
    return reportFailure(err, io);
  } finally {
    await rt.close();
  }
}
