/**
 * The conflicts page and its actions (issue 25). The routes sit behind the dashboard's
 * access guard, so a read-only dashboard refuses the POSTs before they arrive and a
 * writable one takes them only from its own pages (or a client setting the CSRF header)
 * with a JSON body; the check of `allowWrites` here is a second line. A resolution is the
 * one `rowbridge conflicts resolve` stores (sync/two-way/conflict-resolution.ts).
 */
import express from 'express';
import type { Request, Response, Router } from 'express';
import type { Logger } from '../../ground/logger.ts';
import type { RedisClient } from '../../sync/state/redis-types.ts';
import { conflictResolution, describeResolution } from '../../sync/two-way/conflict-resolution.ts';
import type { ConflictChoice } from '../../sync/two-way/conflict-resolution.ts';
import { createLinkStore } from '../../sync/two-way/link-store.ts';
import type { LinkStore } from '../../sync/two-way/link-store.ts';
import { param, send } from './dashboard-http.ts';
import { renderConflictsPage } from './conflicts-page.ts';
import type { JobConflicts } from './conflicts-page.ts';
import type { JobListing } from './job-operations.ts';

/** Options of {@link addConflictRoutes}. */
export interface ConflictRoutesOptions {
  redis: RedisClient;
  statePrefix: string;
  /** The jobs folder's jobs (the two-way ones are listed). */
  listJobs(): Promise<JobListing[]>;
  allowWrites: boolean;
  logger: Logger;
}

const CHOICES = { 'take-source': 'source', 'take-worksheet': 'worksheet', 'take-value': 'value' } as const;

function answer(res: Response, status: number, message: string): void {
  res.status(status).set('cache-control', 'no-store').json({ message });
}

/** Adds `/conflicts` and `POST /conflicts/:job/:id/take-source|take-worksheet|take-value`. */
export function addConflictRoutes(router: Router, options: ConflictRoutesOptions): void {
  /** The job's two-way state, its stored format checked, never stamped (a run does that). */
  async function openStore(job: string): Promise<LinkStore> {
    const store = createLinkStore({ redis: options.redis, prefix: options.statePrefix, job });
    await store.checkFormat({ readOnly: true });
    return store;
  }

  async function twoWayJobs(): Promise<string[]> {
    return (await options.listJobs()).filter((j) => j.spec?.target?.mode === 'two-way').map((j) => j.name);
  }

  router.get('/conflicts', async (req, res) => {
    const filter = param(req, 'job');
    const names = (await twoWayJobs()).filter((name) => filter === undefined || name === filter);
    const jobs: JobConflicts[] = await Promise.all(
      names.map(async (job) => {
        try {
          const conflicts = [...(await (await openStore(job)).conflicts()).values()].sort((a, b) =>
            a.at < b.at ? -1 : a.at > b.at ? 1 : 0,
          );
          return { job, conflicts };
        } catch (err) {
          return { job, conflicts: [], error: (err as Error).message };
        }
      }),
    );
    send(
      res,
      200,
      renderConflictsPage({
        jobs,
        allowWrites: options.allowWrites,
        ...(filter === undefined ? {} : { job: filter }),
      }),
    );
  });

  async function resolve(action: keyof typeof CHOICES, req: Request, res: Response): Promise<void> {
    if (!options.allowWrites) {
      answer(res, 403, 'the dashboard is read-only: start it with --allow-writes');
      return;
    }
    const job = String(req.params.job);
    const id = String(req.params.id);
    if (!(await twoWayJobs()).includes(job)) {
      answer(res, 404, `no two-way job "${job}" in the jobs folder`);
      return;
    }
    const store = await openStore(job);
    const conflict = (await store.conflicts()).get(id);
    if (conflict === undefined) {
      answer(res, 404, `no conflict ${job}/${id}: a run may have settled it; reload the page`);
      return;
    }
    let choice: ConflictChoice;
    if (CHOICES[action] === 'value') {
      const value = (req.body as { value?: unknown } | undefined)?.value;
      if (typeof value !== 'string') {
        answer(res, 400, 'send {"value": "..."}: the value both sides get, as text');
        return;
      }
      choice = { value };
    } else choice = CHOICES[action];
    const decided = conflictResolution(conflict, choice);
    if ('error' in decided) {
      answer(res, 409, `${job}/${id}: ${decided.error}`);
      return;
    }
    await store.saveConflicts([{ ...conflict, take: decided.take }]);
    options.logger.info(
      { job, conflict: id, take: Object.keys(decided.take)[0] },
      'conflict resolved from the dashboard',
    );
    answer(
      res,
      200,
      `${job}/${id}: ${(conflict.fields ?? []).map((f) => f.field).join(', ')} will get ${describeResolution(decided.take)} on both sides at the next run of ${job}.`,
    );
  }

  const json = express.json({ limit: '64kb', type: 'application/json' });
  for (const action of Object.keys(CHOICES) as Array<keyof typeof CHOICES>) {
    router.post(`/conflicts/:job/:id/${action}`, json, (req, res) => {
      resolve(action, req, res).catch((err: unknown) => {
        options.logger.error({ err, job: req.params.job, action }, 'dashboard conflict action failed');
        if (!res.headersSent)
          answer(res, 500, `The ${action} action failed; the error is in the rowbridge log.`);
      });
    });
  }
}
