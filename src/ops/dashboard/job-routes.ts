/**
 * The jobs pages and the job actions (issue 13). The routes sit on the dashboard's
 * router behind its access guard, so a read-only dashboard refuses every POST here
 * before it arrives, and a writable one only takes them from its own pages (or a
 * client that sets the CSRF header) with a JSON body; the check below is a second line.
 */
import type { Request, Response, Router } from 'express';
import type { Logger } from '../../ground/logger.ts';
import { DASHBOARD_SCRIPT, DASHBOARD_SCRIPT_PATH } from './dashboard-script.ts';
import { problem, send } from './dashboard-http.ts';
import type { JobOperations } from './job-operations.ts';
import { renderJobPage } from './job-page.ts';
import { renderJobsPage } from './jobs-page.ts';
import { DEFAULT_UNHEALTHY_AFTER } from './job-summary.ts';

/** Options of {@link addJobRoutes}. */
export interface JobRoutesOptions {
  jobs: JobOperations;
  allowWrites: boolean;
  logger: Logger;
  /** @defaultValue 3 */
  unhealthyAfter?: number;
  /** Runs the jobs page's sparklines cover. @defaultValue 30 */
  trendRuns?: number;
  /** Runs the job page lists and charts. @defaultValue 100 */
  jobPageRuns?: number;
}

type Action = 'run' | 'pause' | 'resume' | 'replay';

function answer(res: Response, status: number, body: { message: string; runId?: string }): void {
  res.status(status).set('cache-control', 'no-store').json(body);
}

/** Adds `/jobs`, `/jobs/:name`, the POST actions and the pages' script to `router`. */
export function addJobRoutes(router: Router, options: JobRoutesOptions): void {
  const { jobs } = options;
  const unhealthyAfter = options.unhealthyAfter ?? DEFAULT_UNHEALTHY_AFTER;

  router.get(DASHBOARD_SCRIPT_PATH, (_req, res) => {
    res.type('text/javascript').set('cache-control', 'no-cache').send(DASHBOARD_SCRIPT);
  });

  router.get('/jobs', async (_req, res) => {
    const listed = await jobs.listJobs();
    const [schedules, runs] = await Promise.all([
      jobs.schedules(),
      jobs.recentRuns(
        listed.map((j) => j.name),
        options.trendRuns ?? 30,
      ),
    ]);
    send(res, 200, renderJobsPage({ jobs: listed, schedules, runs, unhealthyAfter }));
  });

  router.get('/jobs/:name', async (req, res) => {
    const name = req.params.name;
    const job = await jobs.getJob(name);
    if (job === undefined) {
      problem(res, 404, 'Job not found', `No job file "${name}.yaml" in the jobs folder.`);
      return;
    }
    const [schedules, runs, deadLetters, hooks, notifyFailures, cdcLag] = await Promise.all([
      jobs.schedules(),
      jobs.recentRuns([name], options.jobPageRuns ?? 100),
      jobs.deadLetterCounts(name),
      jobs.recentHooks(name),
      jobs.notifyFailures(name),
      jobs.cdcLag(name),
    ]);
    send(
      res,
      200,
      renderJobPage({
        job,
        schedule: schedules.get(name),
        runs: runs.get(name) ?? [],
        deadLetters,
        hooks,
        notifyFailures,
        cdcLag,
        allowWrites: options.allowWrites,
        unhealthyAfter,
      }),
    );
  });

  async function act(action: Action, req: Request, res: Response): Promise<void> {
    if (!options.allowWrites) {
      answer(res, 403, { message: 'the dashboard is read-only: start it with --allow-writes' });
      return;
    }
    const name = String(req.params.name);
    const job = await jobs.getJob(name);
    if (job === undefined) {
      answer(res, 404, { message: `no job file "${name}.yaml" in the jobs folder` });
      return;
    }
    if (job.spec === undefined) {
      answer(res, 409, { message: `job ${name} is invalid: ${job.error ?? ''}` });
      return;
    }
    const log = options.logger.child({ job: name });
    switch (action) {
      case 'run': {
        const runId = await jobs.runNow(name);
        log.info({ runId }, 'run queued from the dashboard');
        answer(res, 202, { message: `Run ${runId} queued.`, runId });
        return;
      }
      case 'pause':
      case 'resume': {
        if (job.spec.schedule === undefined) {
          answer(res, 409, { message: `job ${name} has no schedule to ${action}` });
          return;
        }
        await (action === 'pause' ? jobs.pause(name) : jobs.resume(name));
        log.info(`schedule ${action === 'pause' ? 'paused' : 'resumed'} from the dashboard`);
        answer(res, 200, { message: `Schedule of ${name} ${action === 'pause' ? 'paused' : 'resumed'}.` });
        return;
      }
      case 'replay': {
        const { runId, count } = await jobs.replayDeadLetters(name);
        if (runId === undefined) {
          answer(res, 200, { message: `Job ${name} has no dead letters to replay.` });
          return;
        }
        log.info({ runId, count }, 'dead letters replay queued from the dashboard');
        answer(res, 202, {
          message: `Replay of ${count} dead letter${count === 1 ? '' : 's'} queued as run ${runId}.`,
          runId,
        });
        return;
      }
    }
  }

  for (const action of ['run', 'pause', 'resume', 'replay'] as const) {
    router.post(`/jobs/:name/${action}`, (req, res) => {
      act(action, req, res).catch((err: unknown) => {
        // The script shows the answer as text: JSON, not the HTML error page.
        options.logger.error({ err, job: req.params.name, action }, 'dashboard job action failed');
        if (!res.headersSent)
          answer(res, 500, { message: `The ${action} action failed; the error is in the rowbridge log.` });
      });
    });
  }
}
