import { createProgress } from '../ops/progress.ts';
import { createWorkers } from '../queue/create-workers.ts';
import type { Runtime } from '../queue/runtime.ts';
import { TERMINAL_STATUSES } from '../sync/state/run-store.ts';
import type { RunRecord, RunReport } from '../sync/state/run-store.ts';
import type { CliIo } from './io.ts';

/**
 * Works queued runs in this process until all of `runIds` have finished, showing
 * progress (a bar on a terminal, a line every few seconds otherwise), then stops the
 * workers. Used by `run`, `dlq replay` and the quickstart.
 */
export async function workRunsInProcess(
  rt: Runtime,
  runIds: readonly string[],
  io: CliIo,
  options: { concurrency?: number; showProgress?: boolean; label?: string } = {},
): Promise<Array<{ record: RunRecord | undefined; report: RunReport }>> {
  const workers = createWorkers(
    rt,
    options.concurrency === undefined ? {} : { concurrency: options.concurrency },
  );
  // Ctrl-C or SIGTERM: stop waiting, let the workers hand back what they hold (bounded),
  // and leave the run queued for any worker to finish; nothing written is lost.
  let interrupted = false;
  const interrupt = () => {
    interrupted = true;
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    const results: Array<{ record: RunRecord | undefined; report: RunReport }> = [];
    for (const runId of runIds) {
      const progress = createProgress({
        label: options.label ?? runId,
        isTty: io.isTty,
        write: (t) => process.stderr.write(t),
        logger: rt.logger,
      });
      let record = await rt.runs.get(runId);
      while (record !== undefined && !TERMINAL_STATUSES.has(record.status) && !interrupted) {
        await new Promise((r) => setTimeout(r, 250));
        record = await rt.runs.get(runId);
        const report = await rt.runs.report(runId);
        const written = report.created + report.updated + report.unchanged + report.skipped;
        if (options.showProgress !== false) {
          progress.update({
            read: record?.read ?? written + report.deadLetteredTotal,
            written,
            deadLettered: report.deadLetteredTotal,
            ...(record?.read === undefined ? {} : { total: record.read }),
          });
        }
      }
      progress.done();
      results.push({ record, report: await rt.runs.report(runId) });
    }
    if (interrupted) {
      io.err(
        `interrupted: the run stays queued; a worker (rowbridge worker) finishes it, or see rowbridge status ${runIds.join(' ')}`,
      );
    }
    return results;
  } finally {
    process.removeListener('SIGINT', interrupt);
    process.removeListener('SIGTERM', interrupt);
    await workers.close();
  }
}
