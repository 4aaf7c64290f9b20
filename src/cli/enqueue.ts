import { enqueueRun } from '../queue/enqueue-run.ts';
import { positiveInt, UsageError } from './args.ts';
import { defineCommand, parseCommand, usageFailure } from './command.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { resolveJobArg, withRuntime } from './open-runtime.ts';

const ENQUEUE = defineCommand({
  name: 'enqueue',
  usage: ['enqueue JOB [--from X --to Y [--chunks N]] [--reset-cursor] [--force] [--json]'],
  description:
    'Queues a run of JOB for the workers (rowbridge worker) and prints its id; with --from and\n' +
    "--to a backfill of that range of the job's cursor, split into chunks. Exit 0 queued, 1 failure.",
  options: {
    from: { type: 'string', value: 'X', help: 'backfill: first cursor value (with --to)' },
    to: { type: 'string', value: 'Y', help: 'backfill: last cursor value (with --from)' },
    chunks: { type: 'string', value: 'N', help: 'backfill: chunks worked in parallel (default 4)' },
    'reset-cursor': {
      type: 'boolean',
      help: "forget the job's incremental cursor: the run reads from the beginning",
    },
    force: { type: 'boolean', help: "mirror: delete past the job's safety threshold" },
    json: { type: 'boolean', help: 'print {"runId": ...}' },
  },
  positionals: { min: 1, max: 1, label: 'job' },
});

/** `enqueue JOB`: queues a run for the workers and prints its id. */
export async function main(args: string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(ENQUEUE, args, io);
  if (typeof parsed === 'number') return parsed;
  const { from, to, force, json } = parsed.values;
  let range;
  try {
    if ((from === undefined) !== (to === undefined)) throw new UsageError('--from and --to go together');
    range =
      from === undefined || to === undefined
        ? undefined
        : { from, to, chunks: positiveInt(parsed.values.chunks, 'chunks') ?? 4 };
  } catch (err) {
    return usageFailure(ENQUEUE, err, io);
  }
  const job = resolveJobArg(parsed.positionals[0]!, io);
  return withRuntime(io, { quiet: true, ...(job.jobsDir ? { jobsDir: job.jobsDir } : {}) }, async (rt) => {
    const runId = await enqueueRun(rt, job.name, {
      trigger: 'enqueue',
      ...(force === true ? { force: true } : {}),
      ...(range === undefined ? {} : { range }),
      ...(parsed.values['reset-cursor'] === true ? { resetCursor: true } : {}),
    });
    io.out(json === true ? JSON.stringify({ runId }) : `enqueued run ${runId}`);
    return EXIT.ok;
  });
}
