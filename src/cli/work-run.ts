import { createProgress } from '../ops/progress.ts';
import { createWorkers } from '../queue/create-workers.ts';
import type { Runtime } from '../queue/runtime-types.ts';
import { TERMINAL_STATUSES } from '../sync/state/run-store.ts';
import type { RunRecord, RunReport } from '../sync/state/run-store.ts';
import { cmd } from './io.ts';
import type { CliIo } from './io.ts';
import { createRedisWatch, RedisGoneError } from './redis-watch.ts';
import { RunInterruptedError } from './run-interrupted-error.ts';

/** How often the shutdown wait is said: redrawn each second on a terminal, a line every 5 s elsewhere. */
const COUNTDOWN_TTY_MS = 1_000;
const COUNTDOWN_LOG_MS = 5_000;

/**
 * Says how long the workers may still take to hand back what they hold, until `work`
 * settles; a person pressing Ctrl-C sees the wait end rather than a silent pause.
 */
async function countDown(io: CliIo, totalMs: number, work: Promise<void>): Promise<void> {
  const started = Date.now();
  const every = io.isTty ? COUNTDOWN_TTY_MS : COUNTDOWN_LOG_MS;
  const say = () => {
    const left = Math.max(0, Math.ceil((totalMs - (Date.now() - started)) / 1000));
    const text = `stopping: waiting for the batches in flight to hand back, ${left} s left (Ctrl-C again to exit at once)`;
    if (io.isTty) process.stderr.write(`\r\u001b[2K${text}`);
    else io.err(text);
  };
  say();
  const timer = setInterval(say, every);
  try {
    await work;
  } finally {
    clearInterval(timer);
    if (io.isTty) process.stderr.write('\r\u001b[2K');
  }
}

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
  // by ROWBRIDGE_SHUTDOWN_TIMEOUT_MS, counted down), and leave the run resumable; nothing
  // written is lost; exit 130. A second Ctrl-C exits at once: the next `run` takes over.
  let interrupted = false;
  let closeTimeoutMs: number | undefined;
  const detach = onStopSignals(
    rt,
    io,
    () => {
      interrupted = true;
    },
    `; \`${cmd(io)} run\` of the job resumes the run`,
  );
  try {
    await workers.ready;
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
        // The counts of status, the report and the dashboard: written = created + updated.
        const written = report.created + report.updated;
        const unchanged = report.unchanged + report.skipped;
        if (options.showProgress !== false) {
          progress.update({
            read: record?.read ?? written + unchanged + report.deadLetteredTotal,
            written,
            unchanged,
            deadLettered: report.deadLetteredTotal,
            ...(record?.read === undefined ? {} : { total: record.read }),
            ...(record?.phase ? { phase: record.phase } : {}),
          });
        }
      }
      progress.done();
      results.push({ record, report: await watch.outlast(() => rt.runs.report(runId)) });
    }
    if (!interrupted) return results;
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
    const closing = workers.close(closeTimeoutMs);
    if (interrupted) await countDown(io, closeTimeoutMs ?? rt.settings.shutdownTimeoutMs, closing);
    else await closing;
    detach();
  }
  throw new RunInterruptedError(
    `interrupted: what was in flight was handed back and the run stays resumable; ` +
      `\`${cmd(io)} run\` of the job resumes it (see \`${cmd(io)} status ${runIds.join(' ')}\`)`,
  );
}

/**
 * The shutdown's hard deadline: the workers get ROWBRIDGE_SHUTDOWN_TIMEOUT_MS to hand
 * back what they hold, the rest a few seconds; whatever still holds the process then (a
 * source stuck in a socket) does not keep it alive. The run stays resumable.
 */
export function hardDeadline(rt: Runtime, io: CliIo, workersMs = rt.settings.shutdownTimeoutMs): void {
  setTimeout(() => {
    io.err(`shutdown deadline passed: exiting; the next \`${cmd(io)} run\` of the job resumes the run`);
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
