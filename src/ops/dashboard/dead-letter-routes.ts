/**
 * `/dead-letters` (filtered by job, run, category, field and code) and
 * `/dead-letters.csv`, the same CSV as `rowbridge dlq export --csv` for the page's
 * filter: formula-safe cells, `_dlq_*` reason columns, then the rows as read. The rows
 * are personal data: a read-only dashboard serves the reason columns only, as it shows
 * batch jobs by their ids only.
 */
import type { Request, Router } from 'express';
import { deadLettersToCsv } from '../../sync/state/dead-letter-csv.ts';
import type { DeadLetterEntry } from '../../sync/state/dead-letter-entry.ts';
import type { DeadLetterStore } from '../../sync/state/dead-letter-store.ts';
import { BadRequest, categoryParam, param, send } from './dashboard-http.ts';
import { findDeadLetters, iterateDeadLetters } from './dead-letter-query.ts';
import type { DeadLetterQuery } from './dead-letter-query.ts';
import { summariseDeadLetters } from './dead-letter-summary.ts';
import { renderDeadLettersPage } from './dead-letters-page.ts';

/** Dead letters listed per page. */
export const DEAD_LETTERS_PER_PAGE = 100;
/** More matching entries than this are refused as one download: narrow the filter or use the CLI. */
export const MAX_CSV_ENTRIES = 50_000;

/** The page's filter from its query parameters (`code` a whole number). */
export function deadLetterQuery(req: Request): DeadLetterQuery {
  const job = param(req, 'job');
  const runId = param(req, 'run');
  const category = categoryParam(req);
  const field = param(req, 'field');
  const code = param(req, 'code');
  if (code !== undefined && !/^-?\d{1,12}$/.test(code))
    throw new BadRequest(
      `query parameter "code" must be a platform error code (a whole number), got "${code}"`,
    );
  return {
    ...(job === undefined ? {} : { job }),
    ...(runId === undefined ? {} : { runId }),
    ...(category === undefined ? {} : { category }),
    ...(field === undefined ? {} : { field }),
    ...(code === undefined ? {} : { errorCode: Number(code) }),
  };
}

/** One page of dead letters; a cursor that is not one of this list's is the caller's mistake (400). */
export async function pageOfDeadLetters(
  store: Pick<DeadLetterStore, 'list'>,
  query: DeadLetterQuery,
  cursor: string | undefined,
): Promise<{ entries: DeadLetterEntry[]; next?: string }> {
  try {
    return await findDeadLetters(store, query, { limit: DEAD_LETTERS_PER_PAGE, cursor });
  } catch (err) {
    if (cursor !== undefined)
      throw new BadRequest(`query parameter "cursor" is not a page cursor of this list`, { cause: err });
    throw err;
  }
}

/** A file name for the download: the filter's job and category, nothing a header could choke on. */
function fileName(query: DeadLetterQuery): string {
  const parts = ['dead-letters', query.job, query.category, query.field]
    .filter((p): p is string => p !== undefined)
    .map((p) => p.replace(/[^A-Za-z0-9_-]+/g, '_'));
  return `${parts.join('-')}.csv`;
}

/** Adds the dead-letters page and its CSV download to `router`. */
export function addDeadLetterRoutes(
  router: Router,
  options: { deadLetters: DeadLetterStore; allowWrites: boolean; jobNames(): Promise<string[]> },
): void {
  const store = options.deadLetters;

  router.get('/dead-letters', async (req, res) => {
    const query = deadLetterQuery(req);
    const scope = {
      ...(query.job === undefined ? {} : { job: query.job }),
      ...(query.runId === undefined ? {} : { runId: query.runId }),
    };
    const [counts, page, summary, jobs] = await Promise.all([
      store.counts(scope),
      pageOfDeadLetters(store, query, param(req, 'cursor')),
      summariseDeadLetters(store, query),
      options.jobNames(),
    ]);
    send(
      res,
      200,
      renderDeadLettersPage({
        filter: query,
        counts,
        entries: page.entries,
        next: page.next,
        summary,
        jobs,
        csvHasRows: options.allowWrites,
      }),
    );
  });

  router.get('/dead-letters.csv', async (req, res) => {
    const query = deadLetterQuery(req);
    const entries: DeadLetterEntry[] = [];
    for await (const entry of iterateDeadLetters(store, query)) {
      if (entries.length >= MAX_CSV_ENTRIES)
        throw new BadRequest(
          `more than ${MAX_CSV_ENTRIES} dead letters match: narrow the filter, or export them with rowbridge dlq export --csv`,
        );
      entries.push(options.allowWrites ? entry : { ...entry, source: { ...entry.source, data: {} } });
    }
    res
      .status(200)
      .type('text/csv; charset=utf-8')
      .set({
        'cache-control': 'no-store',
        'content-disposition': `attachment; filename="${fileName(query)}"`,
      })
      .send(deadLettersToCsv(entries));
  });
}
