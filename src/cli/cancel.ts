import { cancelRun } from '../queue/cancel-run.ts';
import { defineCommand, parseCommand } from './command.ts';
import { cmd, EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { withRuntime } from './open-runtime.ts';

const CANCEL = defineCommand({
  name: 'cancel',
  usage: ['cancel RUN [--abandon] [--json]'],
  description:
    'Stops a run wherever it is worked (a `run` in a terminal, a worker): batches not yet written\n' +
    'write nothing, batches in flight finish, rows written stay. The run stays resumable\n' +
    '(`run JOB` resumes it), or with --abandon is given up (the next run starts anew).\n' +
    'Exit 0 stopped (or already stopped), 1 unknown or already finished run, 64 misuse.',
  options: {
    abandon: { type: 'boolean', help: 'give the run up: no resume, its row bookkeeping dropped' },
    json: { type: 'boolean', help: 'print {"runId", "status", "resumable"}' },
  },
  positionals: { min: 1, max: 1, label: 'run' },
});

/** `cancel RUN`: stops a run, leaving it resumable or abandoned. */
export async function main(args: string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(CANCEL, args, io);
  if (typeof parsed === 'number') return parsed;
  const runId = parsed.positionals[0]!;
  const abandon = parsed.values.abandon === true;
  const c = cmd(io);
  return withRuntime(io, { quiet: true }, async (rt) => {
    const outcome = await cancelRun(rt, runId, { abandon, by: `\`${c} cancel\`` });
    if (outcome.kind === 'unknown') {
      io.err(`no run ${runId} (\`${c} status\` lists the latest runs)`);
      return EXIT.failure;
    }
    const { record } = outcome;
    if (outcome.kind === 'finished') {
      io.err(`run ${runId} (${record.job}) already finished (${record.status}): nothing to cancel`);
      return EXIT.failure;
    }
    const resumable = (await rt.runs.resumableRun(record.job)) === runId;
    if (parsed.values.json === true) {
      io.out(JSON.stringify({ runId, status: record.status, resumable }));
      return EXIT.ok;
    }
    const next = resumable
      ? `it stays resumable: \`${c} run ${record.job}\` resumes it (\`--fresh\` or \`${c} cancel ${runId} --abandon\` gives it up)`
      : 'it will not be resumed: the next run of the job starts anew';
    io.out(
      outcome.kind === 'stopped'
        ? `run ${runId} (${record.job}) was already stopped (${record.message ?? 'failed'}); ${next}`
        : `run ${runId} (${record.job}) ${outcome.abandoned ? 'abandoned' : 'cancelled'}; ${next}`,
    );
    return EXIT.ok;
  });
}
