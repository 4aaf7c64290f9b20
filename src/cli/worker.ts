import { loadSettings } from '../../config/settings.ts';
import type { Metrics } from '../ops/metrics.ts';
import type { HookMetrics } from '../ops/hooks/hook-metrics.ts';
import { createHookInbox } from '../queue/hook-inbox.ts';
import { createReadiness } from '../ops/health.ts';
import { createWorkers } from '../queue/create-workers.ts';
import type { Workers } from '../queue/create-workers.ts';
import { createQueues } from '../queue/queues.ts';
import { takeOverOrphans } from '../queue/resume-run.ts';
import type { Runtime } from '../queue/runtime-types.ts';
import type { RunRecord } from '../sync/state/run-store.ts';
import { positiveInt } from './args.ts';
import { defineCommand, parseCommand } from './command.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { openRuntime } from './open-runtime.ts';
import { onStopSignals } from './work-run.ts';
import { waitForFirstRedis } from './redis-reachable.ts';
import { createRedisWatch } from './redis-watch.ts';
import { reportFailure } from './report-failure.ts';
import type { ProcessTuning } from './process-tuning.ts';

/** How long a starting worker tries to reach Redis before it says it cannot. */
const FIRST_REACH_MS = 5_000;

const WORKER = defineCommand({
  name: 'worker',
  usage: ['worker [--concurrency N] [--ops-port N [--host H] [--dashboard]] [--no-schedules]'],
  description:
    'Works queued runs until SIGTERM/SIGINT, then finishes the batches in flight and exits 0.\n' +
    'Registers the schedules of the jobs folder first.',
  options: {
    concurrency: {
      type: 'string',
      value: 'N',
      help: 'batches worked at once (default 4)',
    },
    'ops-port': {
      type: 'string',
      value: 'N',
      help: 'serve /metrics, /healthz, /readyz and POST /hooks/JOB on this port',
    },
    host: {
      type: 'string',
      value: 'H',
      help: 'interface of the ops server (default 127.0.0.1)',
    },
    dashboard: {
      type: 'boolean',
      help: 'serve the dashboard on the ops server too',
    },
    'no-schedules': {
      type: 'boolean',
      help: 'do not register the schedules of jobs/',
    },
  },
});

/** Counts each finished run in the metrics: completed, or failed for good. */
function observeRuns(workers: Workers, rt: Runtime, metrics: Metrics, hooks: HookMetrics): void {
  const inbox = createHookInbox({ redis: rt.redis, prefix: rt.statePrefix });
  const observe = (record: RunRecord | undefined) => {
    if (record === undefined) return;
    rt.runs.report(record.runId).then(
      (report) => metrics.observeRun(record, report),
      (err: unknown) => rt.logger.warn({ err }, 'run metrics'),
    );
    if (record.trigger === 'hook' && record.status === 'completed')
      inbox.takeWaits(record.job, record.runId).then(
        (waits) => hooks.landed(record.job, waits),
        (err: unknown) => rt.logger.warn({ err }, 'hook metrics'),
      );
  };
  workers.runWorker.on('completed', (_job, record: RunRecord | undefined) => observe(record));
  // A run that failed for good fails its queue job (UnrecoverableError): counted too.
  workers.runWorker.on('failed', (job) => {
    const runId = job?.data.chunk === undefined ? job?.data.runId : undefined;
    if (runId !== undefined && job?.finishedOn !== undefined)
      rt.runs.get(runId).then(observe, (err: unknown) => rt.logger.warn({ err }, 'run metrics'));
  });
}

/**
 * `worker`: long-running. Registers the schedules of jobs/ once, works runs and batches,
 * and with --ops-port serves /metrics, /healthz, /readyz (and the dashboard with
 * --dashboard). On SIGTERM/SIGINT it stops taking jobs, waits a bounded time for those
 * in flight, and exits 0.
 */
export async function main(args: string[], io: CliIo, tuning?: ProcessTuning): Promise<number> {
  const parsed = parseCommand(WORKER, args, io);
  if (typeof parsed === 'number') return parsed;
  try {
    // A bad setting is said in one line before anything opens: below, it would escape
    // with its stack from outside the try that reports failures.
    const { redisUrl } = loadSettings(io.env);
    // A Redis never reached is said within seconds (exit 1): ROWBRIDGE_REDIS_WAIT_MS is
    // for one that goes away once the worker was connected (createRedisWatch below).
    await waitForFirstRedis(redisUrl, FIRST_REACH_MS);
  } catch (err) {
    return reportFailure(err, io);
  }
  // V8's start-up mode (./process-tuning.ts), in two steps: the young generation stays
  // small until the worker has started, the optimizing compilers stay off until its first
  // job. Waiting for work runs little code, and optimizing any of it brings the compilers'
  // machine code in for good (released at start: +2 MB by the first stalled check).
  const releaseYoungGeneration = tuning?.holdYoungGeneration() ?? (() => undefined);
  const releaseOptimizers = tuning?.holdOptimizingCompilers() ?? (() => undefined);
  // Metrics exist only with the ops server: without it nobody could read them.
  let metrics: Metrics | undefined;
  let hookMetrics: HookMetrics | undefined;
  const rt = openRuntime(io, {
    onClientEvent: (event) => metrics?.onClientEvent(event),
    onRowOutcomes: (moved) => metrics?.onRowOutcomes(moved),
  });
  const readiness = createReadiness();
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const concurrency = positiveInt(parsed.values.concurrency, 'concurrency');
    const opsPort = positiveInt(parsed.values['ops-port'], 'ops-port');
    if (opsPort !== undefined) {
      // prom-client, express and bull-board load only when the ops server is asked for.
      const [{ createMetrics }, { startOpsServer }, { createHookMetrics }] = await Promise.all([
        import('../ops/metrics.ts'),
        import('../ops/ops-server.ts'),
        import('../ops/hooks/hook-metrics.ts'),
      ]);
      const opsMetrics = createMetrics();
      metrics = opsMetrics;
      hookMetrics = createHookMetrics(opsMetrics.registry);
      opsMetrics.collectFrom(rt);
      cleanups.push(() => opsMetrics.close());
      const ops = await startOpsServer({
        rt,
        metrics: opsMetrics,
        readiness,
        port: opsPort,
        host: parsed.values.host ?? '127.0.0.1',
        dashboard: parsed.values.dashboard === true,
        hooks: { metrics: hookMetrics },
      });
      cleanups.push(() => ops.close());
      rt.logger.info({ url: ops.url }, 'ops server listening');
    }
    if (parsed.values['no-schedules'] !== true) {
      // The schedules bring the job-spec schemas and cron: loaded only by a worker that registers them.
      const { registerSchedules } = await import('../queue/schedules.ts');
      const { registered, removed } = await createRedisWatch(rt, io).outlast(() => registerSchedules(rt));
      rt.logger.info({ registered, removed }, 'schedules registered');
    }
    // Jobs a killed process left active (no live worker anywhere) are taken at once,
    // not after their locks expire.
    const queues = createQueues(rt);
    const taken = await createRedisWatch(rt, io)
      .outlast(() => takeOverOrphans(queues))
      .finally(() => queues.close());
    if (taken > 0) rt.logger.info({ jobs: taken }, 'took over the jobs of a worker that is gone');
    const workers = createWorkers(rt, concurrency === undefined ? {} : { concurrency });
    cleanups.push(() => workers.close());
    // Another version's state in this Redis: refused here, exit 1, no job taken.
    await workers.ready;
    // Notifications are delivered (and retried) by every worker; stale jobs checked too.
    const { createNotifyWorker } = await import('../queue/notify-worker.ts');
    const notifier = createNotifyWorker(rt, {
      onResult: (r) => metrics?.onNotification(r),
    });
    cleanups.push(() => notifier.close());
    // postgres-cdc jobs: each streamed by one worker at a time (docs/cdc.md).
    const { startCdcConsumers } = await import('../queue/cdc-supervisor.ts');
    cleanups.push(await startCdcConsumers(rt));
    const { startStaleCheck } = await import('../queue/stale-check.ts');
    const stopStaleCheck = startStaleCheck(rt, rt.settings.staleCheckMs);
    cleanups.push(() => Promise.resolve(stopStaleCheck()));
    // 'active' is emitted as a job is taken, before its processor (and the sync engine it
    // imports) loads: those modules load with the compilers on, as in every command.
    workers.runWorker.once('active', releaseOptimizers);
    workers.batchWorker.once('active', releaseOptimizers);
    if (metrics !== undefined && hookMetrics !== undefined) observeRuns(workers, rt, metrics, hookMetrics);
    readiness.markReady();
    rt.logger.info({ concurrency: concurrency ?? 4 }, 'worker started');
    releaseYoungGeneration();
    await new Promise<void>((resolve) => {
      const stop = (signal: string) => {
        rt.logger.info({ signal }, 'stopping: finishing in-flight batches');
        resolve();
      };
      onStopSignals(rt, io, stop);
    });
    readiness.markStopping();
    return EXIT.ok;
  } catch (err) {
    return reportFailure(err, io);
  } finally {
    releaseYoungGeneration();
    releaseOptimizers();
    // Released in reverse: workers first (bounded wait), then the ops server, then metrics.
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((err: unknown) => rt.logger.warn({ err }, 'cleanup'));
    await rt.close();
  }
}
