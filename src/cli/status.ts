import { parseCliArgs } from './args.ts';
import { formatReport } from './format-report.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { openRuntime } from './open-runtime.ts';
import { reportFailure } from './report-failure.ts';

const USAGE = 'usage: rowbridge status [RUN] [--job NAME] [--limit N] [--json]';

/** `status [RUN]`: one run's report, or the latest runs. */
export async function main(args: string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseCliArgs(args, {
      json: { type: 'boolean' },
      job: { type: 'string' },
      limit: { type: 'string' },
    });
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}`);
    return EXIT.usage;
  }
  const rt = openRuntime(io, { quiet: true });
  try {
    const runId = parsed.positionals[0];
    if (runId !== undefined) {
      const record = await rt.runs.get(runId);
      if (record === undefined) {
        io.err(`no run ${runId}`);
        return EXIT.failure;
      }
      const report = await rt.runs.report(runId);
      io.out(
        parsed.values.json === true
          ? JSON.stringify({ run: record, report }, null, 2)
          : formatReport(record, report),
      );
      return EXIT.ok;
    }
    const limit = Number(parsed.values.limit ?? 20);
    const runs = await rt.runs.list({ limit, ...(parsed.values.job ? { job: parsed.values.job } : {}) });
    if (parsed.values.json === true) {
      const withReports = await Promise.all(
        runs.map(async (run) => ({ run, report: await rt.runs.report(run.runId) })),
      );
      io.out(JSON.stringify(withReports, null, 2));
    } else if (runs.length === 0) {
      io.out('no runs yet');
    } else {
      for (const run of runs)
        io.out(`${run.runId}  ${run.status.padEnd(10)} ${run.createdAt}  ${run.message ?? ''}`);
    }
    return EXIT.ok;
  } catch (err) {
    return reportFailure(err, io);
  } finally {
    await rt.close();
  }
}
