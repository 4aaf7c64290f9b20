import { createProgress } from '../ops/progress.ts';
import { createWorkers } from '../queue/create-workers.ts';
import type { Runtime } from '../queue/runtime.ts';
import { TERMINAL_STATUSES } from '../sync/state/run-store.ts';
import type { RunRecord, RunReport } from '../sync/state/run-store.ts';
import type { CliIo } from './io.ts';
import { createRedisWatch, RedisGoneError } from './redis-watch.ts';

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
  // This process works these runs only: other queued runs are left to the workers.
  const workers = createWorkers(rt, {
    onlyRuns: new Set(runIds),
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
  });
  // Ctrl-C or SIGTERM: stop waiting, let the workers hand back what they hold (bounded
  // by ROWBRIDGE_SHUTDOWN_TIMEOUT_MS), and leave the run resumable; nothing written is
  // lost. A second Ctrl-C exits at once: the next `run` takes over what was held.
  let interrupted = false;
  let closeTimeoutMs: number | undefined;
  const detach = onStopSignals(
    rt,
    io,
    (signal) => {
      interrupted = true;
      io.err(`${signal}: stopping (Ctrl-C again to exit at once)`);
    },
    '; `rowbridge run` of the job resumes the run',
  );
  try {
    const results: Array<{ record: RunRecord | undefined; report: RunReport }> = [];
    for (const runId of runIds) {
      const progress = createProgress({
        label: options.label ?? runId,
        isTty: io.isTty,
        write: (t) => process.stderr.write(t),
        logger: rt.logger,
      });
      const watch = createRedisWatch(rt, io);
      let record = await watch.outlast(() => rt.runs.get(runId));
      while (record !== undefined && !TERMINAL_STATUSES.has(record.status) && !interrupted) {
        await new Promise((r) => setTimeout(r, 250));
        const [now, report] = await watch.outlast(() =>
          Promise.all([rt.runs.get(runId), rt.runs.report(runId)]),
        );
        record = now;
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
      results.push({ record, report: await watch.outlast(() => rt.runs.report(runId)) });
    }
    if (interrupted) {
      io.err(
        `interrupted: the run stays resumable; \`rowbridge run\` of the job resumes it (or a worker finishes it); see rowbridge status ${runIds.join(' ')}`,
      );
    }
    return results;
  } catch (err) {
    // Redis stayed away: the workers cannot hand anything back; do not wait for them.
    // A job whose failure BullMQ cannot record keeps its lock timer alive, so the
    // process would never end by itself: the shutdown's deadline bounds it.
    if (err instanceof RedisGoneError) {
      closeTimeoutMs = 1_000;
      // Nothing can be handed back without Redis: exit a few seconds after saying so, not
      // after the shutdown timeout meant for workers finishing their batches.
      hardDeadline(rt, io, closeTimeoutMs);
    }
    throw err;
  } finally {
    // Still listening while the workers close: a second Ctrl-C then exits at once.
    await workers.close(closeTimeoutMs);
    detach();
  }
}

/**
 * The shutdown's hard deadline: the workers get ROWBRIDGE_SHUTDOWN_TIMEOUT_MS to hand
 * back what they hold, the rest a few seconds; whatever still holds the process then (a
 * source stuck in a socket) does not keep it alive. The run stays resumable.
 */
export function hardDeadline(rt: Runtime, io: CliIo, workersMs = rt.settings.shutdownTimeoutMs): void {
  setTimeout(() => {
    io.err('shutdown deadline passed: exiting; the next `rowbridge run` of the job resumes the run');
    process.exit(1);
  }, workersMs + HARD_DEADLINE_EXTRA_MS).unref();
}

/** What closing connections may take after the workers' own deadline. */
const HARD_DEADLINE_EXTRA_MS = 5_000;

/**
 * Ctrl-C and SIGTERM for a command that works jobs: the first calls `stop` and arms the
 * hard deadline; a second exits 130 at once (what was held is taken over by the next run
 * or worker). Returns what stops listening.
 */
export function onStopSignals(
  rt: Runtime,
  io: CliIo,
  stop: (signal: NodeJS.Signals) => void,
  /** Said after `SIGINT again: exiting now`. */
  again = '',
): () => void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      io.err(`${signal} again: exiting now${again}`);
      process.exit(130);
    }
    stopping = true;
    hardDeadline(rt, io);
    stop(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  };
}
