/**
 * A job's recent runs with their reports, for the dashboard's jobs and job pages. The
 * run store keeps one index of all runs (newest first) and no index per job, so this
 * walks that index in pages until every job asked for has its `perJob` runs or `maxScan`
 * ids were read: one pass for all jobs instead of one scan per job.
 */
import type { RedisClient } from './redis-types.ts';
import { stateKey } from './redis-types.ts';
import type { RunRecord, RunReport, RunStore } from './run-store.ts';

/** A run with its report. */
export interface RunHistoryItem {
  record: RunRecord;
  report: RunReport;
}

/** Options of {@link RunHistory.recent}. */
export interface RecentRunsOptions {
  /** Runs kept per job, newest first. @defaultValue 30 */
  perJob?: number;
  /**
   * Run ids read from the index at most, so a page never reads every record of a busy
   * deployment (a busy job can then hide a quiet one's older runs). @defaultValue 5000
   */
  maxScan?: number;
}

/** Reads recent runs per job. */
export interface RunHistory {
  /** The newest runs of each named job (every job seen, when `jobs` is undefined), newest first. */
  recent(
    jobs: readonly string[] | undefined,
    options?: RecentRunsOptions,
  ): Promise<Map<string, RunHistoryItem[]>>;
}

const PAGE = 500;

/**
 * `redis` and `prefix` are the run store's: the index read is the store's `runs` sorted
 * set (score = creation time); an id whose record already expired is skipped.
 */
export function createRunHistory(deps: {
  redis: RedisClient;
  prefix: string;
  runs: Pick<RunStore, 'get' | 'report'>;
}): RunHistory {
  const indexKey = stateKey(deps.prefix, 'runs');
  return {
    async recent(jobs, options = {}) {
      const perJob = options.perJob ?? 30;
      const maxScan = options.maxScan ?? 5000;
      const wanted = jobs === undefined ? undefined : new Set(jobs);
      const found = new Map<string, RunRecord[]>();
      for (const job of jobs ?? []) found.set(job, []);
      const complete = () =>
        wanted !== undefined && [...wanted].every((job) => (found.get(job)?.length ?? 0) >= perJob);
      for (let start = 0; start < maxScan && !complete(); start += PAGE) {
        const ids = await deps.redis.zrevrange(indexKey, start, Math.min(start + PAGE, maxScan) - 1);
        const records = await Promise.all(ids.map((id) => deps.runs.get(id)));
        for (const record of records) {
          if (record === undefined || (wanted !== undefined && !wanted.has(record.job))) continue;
          const list = found.get(record.job) ?? [];
          if (list.length < perJob) list.push(record);
          found.set(record.job, list);
        }
        if (ids.length < PAGE) break;
      }
      const out = new Map<string, RunHistoryItem[]>();
      await Promise.all(
        [...found].map(async ([job, records]) => {
          out.set(
            job,
            await Promise.all(
              records.map(async (record) => ({ record, report: await deps.runs.report(record.runId) })),
            ),
          );
        }),
      );
      return out;
    },
  };
}
