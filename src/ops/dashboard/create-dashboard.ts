/**
 * The dashboard (issue #5, point 2): bull-board for the two queues under `/queues`, and
 * rowbridge's own server-rendered pages beside it: `/runs` runs (run-routes.ts), `/runs/:id` a run's report
 * and dead letters, `/dead-letters` the store filtered (and as CSV), `/jobs` and
 * `/jobs/:name` the job files with their schedules, trends and actions (job-routes.ts),
 * `/conflicts` the two-way conflicts and their resolution (conflict-routes.ts).
 * No front-end build (one small same-origin script, dashboard-script.ts); every
 * value from Redis is escaped by the `html` template. Every route sits behind the access
 * guard (dashboard-access.ts); bull-board is read-only unless writes are allowed, and
 * then only shows batch rows (personal data) to a viewer who may change them anyway.
 */
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { Queue } from 'bullmq';
import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import { BATCH_QUEUE, RUN_QUEUE } from '../../queue/queues.ts';
import type { RunJobData } from '../../queue/queues.ts';
import { cancelRun } from '../../queue/cancel-run.ts';
import { batchRowIndexes } from '../../sync/batch/batch-job-rows.ts';
import type { DashboardAccess } from './dashboard-access.ts';
import { addConflictRoutes } from './conflict-routes.ts';
import { addDeadLetterRoutes } from './dead-letter-routes.ts';
import { createJobOperations } from './job-operations.ts';
import type { JobOperations, JobOperationsRuntime } from './job-operations.ts';
import type { CdcLagThresholds } from '../../sync/cdc/cdc-lag.ts';
import { addJobRoutes } from './job-routes.ts';
import { BadRequest, problem } from './dashboard-http.ts';
import { addRunRoutes } from './run-routes.ts';
import { bullBoardWayBack } from './bull-board-page.ts';
import { withoutOutsideFonts } from './without-outside-fonts.ts';

/** Where bull-board is mounted. */
export const QUEUES_PATH = '/queues';

/** Options of {@link createDashboard}. */
export interface DashboardOptions {
  /** The whole runtime: the job actions queue runs and register schedules as the CLI does. */
  /** What the pages read and the actions use: no platform client, no settings. */
  rt: JobOperationsRuntime;
  /** Host, login and write checks in front of every route (see dashboard-access.ts). */
  access: DashboardAccess;
  /** What the jobs pages read and do. @defaultValue {@link createJobOperations} on `rt` */
  jobs?: JobOperations;
  /** Over these a stream's lag shows a warning on its job page. @defaultValue the settings' defaults */
  cdcLag?: CdcLagThresholds;
}

/** The dashboard's routes, to mount at the root of a server, and its queue handles. */
export interface Dashboard {
  router: Router;
  /** Closes the queue handles (the runtime's connection stays open). */
  close(): Promise<void>;
}

/**
 * What bull-board shows of a batch job's data to a read-only viewer: the ids, not the
 * rows (source records are personal data, and the viewer has no use for them).
 */
export function batchDataSummary(data: unknown): unknown {
  if (typeof data !== 'object' || data === null) return data;
  const { runId, job, batchNo, pauses } = data as Record<string, unknown>;
  const indexes = batchRowIndexes(data);
  return { runId, job, batchNo, rows: indexes?.length, rowIndexes: indexes, pauses };
}

export function createDashboard(options: DashboardOptions): Dashboard {
  const { rt } = options;
  const readOnlyMode = !options.access.allowWrites;
  const queueOptions = { connection: rt.connection, prefix: rt.queuePrefix };
  const runs = new Queue<RunJobData>(RUN_QUEUE, queueOptions);
  const queues = [runs, new Queue(BATCH_QUEUE, queueOptions)];
  // The runtime already logs its connection's errors; unheard, each queue would print them again.
  for (const q of queues) q.on('error', () => undefined);
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUES_PATH);
  createBullBoard({
    queues: queues.map((q) => {
      const adapter = new BullMQAdapter(q, { readOnlyMode, allowRetries: !readOnlyMode });
      if (readOnlyMode && q.name === BATCH_QUEUE) adapter.setFormatter('data', batchDataSummary);
      return adapter;
    }),
    serverAdapter,
    options: {
      uiConfig: {
        boardTitle: 'rowbridge',
        // Redis's version, memory, clients and uptime help an attacker more than a viewer.
        hideRedisDetails: readOnlyMode,
        miscLinks: [
          { text: 'Jobs', url: '/jobs' },
          { text: 'Runs', url: '/runs' },
          { text: 'Dead letters', url: '/dead-letters' },
          { text: 'Conflicts', url: '/conflicts' },
        ],
      },
    },
  });

  const router = express.Router();
  router.use(options.access.guard);
  router.use(QUEUES_PATH, withoutOutsideFonts, bullBoardWayBack, serverAdapter.getRouter() as Router);

  const jobs = options.jobs ?? createJobOperations(rt, runs, options.cdcLag);
  const jobNames = async () => (await jobs.listJobs()).map((j) => j.name);
  addRunRoutes(router, {
    redis: rt.redis,
    statePrefix: rt.statePrefix,
    runs: rt.runs,
    deadLetters: rt.deadLetters,
    jobNames,
    allowWrites: options.access.allowWrites,
    logger: rt.logger,
    cancel: (runId, abandon) => cancelRun(rt, runId, { abandon, by: 'the dashboard' }),
  });
  addDeadLetterRoutes(router, {
    deadLetters: rt.deadLetters,
    allowWrites: options.access.allowWrites,
    jobNames,
  });
  addJobRoutes(router, {
    jobs,
    allowWrites: options.access.allowWrites,
    logger: rt.logger,
  });
  addConflictRoutes(router, {
    redis: rt.redis,
    statePrefix: rt.statePrefix,
    listJobs: () => jobs.listJobs(),
    allowWrites: options.access.allowWrites,
    logger: rt.logger,
  });

  router.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    if (err instanceof BadRequest) {
      problem(res, 400, 'Bad request', err.message);
      return;
    }
    rt.logger.error({ err }, 'dashboard page failed');
    problem(res, 500, 'Dashboard error', 'The page could not be built; the error is in the rowbridge log.');
  });

  return {
    router,
    async close() {
      await Promise.all(queues.map((q) => q.close().catch(() => undefined)));
    },
  };
}
