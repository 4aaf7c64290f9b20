import type { RunKeys } from './run-keys.ts';
import { TERMINAL_STATUSES } from './run-records.ts';
import type { RunRecords } from './run-records.ts';

/** What a job keeps between its runs: the one active run, the cursor, the run to resume. */
export interface JobState {
  /** One active run per job. Resolves to the run already holding the job, or undefined when acquired. */
  acquireJob(job: string, runId: string): Promise<string | undefined>;
  releaseJob(job: string, runId: string): Promise<void>;
  /** The run holding the job's lock, if any (it may have finished and left it behind). */
  activeRun(job: string): Promise<string | undefined>;
  getCursor(job: string): Promise<string | undefined>;
  /** Saves the cursor; a pull also saves the fingerprint of the shape it wrote (pull-start.ts). */
  setCursor(job: string, cursor: string, shape?: string): Promise<void>;
  /** The shape fingerprint saved with the cursor, if any. */
  getCursorShape(job: string): Promise<string | undefined>;
  /** Forgets the cursor (and its shape): the next run reads from the beginning. Resolves whether there was one. */
  resetCursor(job: string): Promise<boolean>;
  /**
   * Keeps a run that did not finish resumable: its row outcomes live on for `ttlSeconds`
   * (so a resumed run skips the rows already written) and the job names it as the run
   * the next `run JOB` resumes.
   */
  keepResumable(job: string, runId: string, ttlSeconds: number): Promise<void>;
  /** The job's run that failed and can be resumed, if any. */
  resumableRun(job: string): Promise<string | undefined>;
  /**
   * The job has no resumable run any more (a run of it completed, or `--fresh` abandoned
   * it): returns the run that was, so its row bookkeeping can be dropped.
   */
  takeResumable(job: string): Promise<string | undefined>;
}

export function createJobState(keys: RunKeys, records: Pick<RunRecords, 'get'>): JobState {
  const { redis } = keys;
  return {
    async acquireJob(job, runId) {
      const key = keys.jobLock(job);
      for (let attempt = 0; attempt < 2; attempt += 1) {
        if ((await redis.set(key, runId, 'NX')) === 'OK') return undefined;
        const holder = await redis.get(key);
        if (holder === null || holder === runId) {
          await redis.set(key, runId);
          return undefined;
        }
        const held = await records.get(holder);
        // A holder that finished (or whose record expired) left the lock behind: take it over.
        if (held !== undefined && !TERMINAL_STATUSES.has(held.status)) return holder;
        await redis.del(key);
      }
      return undefined;
    },
    async releaseJob(job, runId) {
      const key = keys.jobLock(job);
      if ((await redis.get(key)) === runId) await redis.del(key);
    },
    async activeRun(job) {
      return (await redis.get(keys.jobLock(job))) ?? undefined;
    },
    async getCursor(job) {
      return (await redis.hget(keys.job(job), 'cursor')) ?? undefined;
    },
    async setCursor(job, cursor, shape) {
      if (shape === undefined) await redis.hset(keys.job(job), 'cursor', cursor);
      else await redis.hset(keys.job(job), 'cursor', cursor, 'cursorShape', shape);
    },
    async getCursorShape(job) {
      return (await redis.hget(keys.job(job), 'cursorShape')) ?? undefined;
    },
    async resetCursor(job) {
      return (await redis.hdel(keys.job(job), 'cursor', 'cursorShape')) > 0;
    },
    async keepResumable(job, runId, ttlSeconds) {
      await redis
        .multi()
        .hset(keys.job(job), 'resumable', runId)
        .expire(keys.ledger(runId), ttlSeconds)
        .expire(keys.seen(runId), ttlSeconds)
        .expire(keys.counts(runId), Math.max(ttlSeconds, keys.retentionSeconds))
        .exec();
    },
    async resumableRun(job) {
      return (await redis.hget(keys.job(job), 'resumable')) ?? undefined;
    },
    async takeResumable(job) {
      const [[, runId]] = (await redis
        .multi()
        .hget(keys.job(job), 'resumable')
        .hdel(keys.job(job), 'resumable')
        .exec()) as [[unknown, string | null]];
      return runId ?? undefined;
    },
  };
}
