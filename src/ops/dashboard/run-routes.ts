/**
 * `/runs` (every job's runs, newest first, a page at a time, narrowed by job and status
 * chosen from lists) and `/runs/:id` (a run's report, its next step and dead letters).
 * `/` is the runs page under its old address.
 */
import type { Request, Response, Router } from 'express';
import type { Logger } from '../../ground/logger.ts';
import type { CancelOutcome } from '../../queue/cancel-run.ts';
import { findUnfinishedRun } from '../../queue/resume-run.ts';
import type { DeadLetterStore } from '../../sync/state/dead-letter-store.ts';
import { createRunPages } from '../../sync/state/run-pages.ts';
import type { RedisClient } from '../../sync/state/redis-types.ts';
import type { RunStatus, RunStore } from '../../sync/state/run-store.ts';
import { BadRequest, param, problem, send } from './dashboard-http.ts';
import { pageOfDeadLetters } from './dead-letter-routes.ts';
import { renderRunPage } from './run-page.ts';
import { RUN_STATUSES, renderRunsPage } from './runs-page.ts';

/** What the run pages read. */
export interface RunRoutesOptions {
  redis: RedisClient;
  statePrefix: string;
  runs: RunStore;
  deadLetters: DeadLetterStore;
  /** The job names offered as a filter. */
  jobNames(): Promise<string[]>;
  /** Whether the Cancel buttons show and their POSTs are taken (behind the access guard too). */
  allowWrites?: boolean;
  /** Stops a run as `rowbridge cancel` does (queue/cancel-run.ts). */
  cancel?: (runId: string, abandon: boolean) => Promise<CancelOutcome>;
  logger?: Logger;
}

function answer(res: Response, status: number, message: string): void {
  res.status(status).set('cache-control', 'no-store').json({ message });
}

const DEFAULT_RUNS = 50;
const MAX_RUNS = 500;

function limit(req: Request): number {
  const value = param(req, 'limit');
  if (value === undefined) return DEFAULT_RUNS;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_RUNS) {
    throw new BadRequest(
      `query parameter "limit" must be a whole number from 1 to ${MAX_RUNS}, got "${value}"`,
    );
  }
  return n;
}

function statusParam(req: Request): RunStatus | undefined {
  const value = param(req, 'status');
  if (value === undefined) return undefined;
  if (!(RUN_STATUSES as readonly string[]).includes(value))
    throw new BadRequest(`unknown run status "${value}"; statuses: ${RUN_STATUSES.join(', ')}`);
  return value as RunStatus;
}

/** Adds `/`, `/runs` and `/runs/:id` to `router`. */
export function addRunRoutes(router: Router, options: RunRoutesOptions): void {
  const { runs } = options;
  const pages = createRunPages({ redis: options.redis, prefix: options.statePrefix, runs });

  router.get('/', (req, res) => {
    const search = req.originalUrl.indexOf('?');
    res.redirect(302, `/runs${search === -1 ? '' : req.originalUrl.slice(search)}`);
  });

  router.get('/runs', async (req, res) => {
    const job = param(req, 'job');
    const status = statusParam(req);
    const cursor = param(req, 'cursor');
    const found = await pages
      .page({
        limit: limit(req),
        ...(job === undefined ? {} : { job }),
        ...(status === undefined ? {} : { status }),
        ...(cursor === undefined ? {} : { cursor }),
      })
      .catch((err: unknown) => {
        if (err instanceof RangeError)
          throw new BadRequest(`query parameter "cursor" is not a page cursor of this list`, { cause: err });
        throw err;
      });
    const [items, jobs] = await Promise.all([
      Promise.all(found.records.map(async (record) => ({ record, report: await runs.report(record.runId) }))),
      options.jobNames(),
    ]);
    send(
      res,
      200,
      renderRunsPage({ items, filter: { job, status }, jobs, next: found.next, paged: cursor !== undefined }),
    );
  });

  router.get('/runs/:id', async (req, res) => {
    const runId = req.params.id;
    const record = await runs.get(runId);
    if (record === undefined) {
      problem(
        res,
        404,
        'Run not found',
        `No run "${runId}": it never existed or its record expired (runs are kept 14 days).`,
      );
      return;
    }
    const cursor = param(req, 'cursor');
    const [report, counts, page, unfinished] = await Promise.all([
      runs.report(runId),
      options.deadLetters.counts({ runId }),
      pageOfDeadLetters(options.deadLetters, { runId }, cursor),
      record.status === 'failed' ? findUnfinishedRun({ runs }, record.job) : undefined,
    ]);
    send(
      res,
      200,
      renderRunPage({
        record,
        report,
        counts,
        deadLetters: page.entries,
        next: page.next,
        resumable: unfinished?.runId === runId,
        allowWrites: options.allowWrites === true && options.cancel !== undefined,
      }),
    );
  });

  for (const action of ['cancel', 'abandon'] as const) {
    router.post(`/runs/:id/${action}`, (req, res) => {
      cancelFromPage(action === 'abandon', req.params.id, res).catch((err: unknown) => {
        options.logger?.error({ err, runId: req.params.id, action }, 'dashboard run action failed');
        if (!res.headersSent) answer(res, 500, `The ${action} failed; the error is in the rowbridge log.`);
      });
    });
  }

  async function cancelFromPage(abandon: boolean, runId: string, res: Response): Promise<void> {
    if (options.allowWrites !== true || options.cancel === undefined) {
      answer(res, 403, 'the dashboard is read-only: start it with --allow-writes');
      return;
    }
    const outcome = await options.cancel(runId, abandon);
    switch (outcome.kind) {
      case 'unknown':
        answer(res, 404, `no run ${runId}`);
        return;
      case 'finished':
        answer(res, 409, `Run ${runId} already finished (${outcome.record.status}): nothing to cancel.`);
        return;
      case 'stopped':
        answer(res, 200, `Run ${runId} was already stopped; it stays resumable.`);
        return;
      case 'cancelled':
        options.logger?.info({ runId, job: outcome.record.job, abandon }, 'run cancelled from the dashboard');
        answer(
          res,
          200,
          outcome.abandoned
            ? `Run ${runId} abandoned: the next run of ${outcome.record.job} starts anew.`
            : `Run ${runId} cancelled: it stays resumable (rowbridge run ${outcome.record.job} resumes it).`,
        );
    }
  }
}
