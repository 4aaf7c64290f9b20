/**
 * A run's state in Redis, composed of its concerns: the run records (run-records.ts),
 * the exactly-once outcome ledger (outcome-ledger.ts), the report (run-report.ts) and
 * what a job keeps between runs (job-state.ts). Callers that need one concern take that
 * part's type; the whole store is what the runtime hands out.
 */
import type { RedisClient } from './redis-types.ts';
import { createJobState } from './job-state.ts';
import type { JobState } from './job-state.ts';
import { createOutcomeLedger } from './outcome-ledger.ts';
import type { OutcomeLedger } from './outcome-ledger.ts';
import { runKeys } from './run-keys.ts';
import { createRunRecords } from './run-records.ts';
import type { RunRecords } from './run-records.ts';
import { createRunReports } from './run-report.ts';
import type { RunReports } from './run-report.ts';

export type { RowOutcome } from './outcome-ledger.ts';
export type { RunRecord, RunStatus } from './run-records.ts';
export { TERMINAL_STATUSES } from './run-records.ts';
export type { RunReport } from './run-report.ts';

export interface RunStore extends RunRecords, OutcomeLedger, RunReports, JobState {
  /**
   * Marks a run failed with one sentence saying why (the one place runs fail). A push
   * run that had started reading stays resumable: its row outcomes live on for the
   * row-state TTL and the job names it as the run the next `run JOB` resumes.
   */
  fail(runId: string, message: string): Promise<void>;
}

/** Options of {@link createRunStore}. */
export interface RunStoreOptions {
  redis: RedisClient;
  /** Prefix of rowbridge's keys. */
  prefix: string;
  /** Run records, reports and the runs index keep this long. @defaultValue 14 days */
  retentionSeconds?: number;
  /** Row outcomes of a failed or abandoned run keep this long. @defaultValue 7 days */
  rowStateTtlSeconds?: number;
  /** Sees the final outcomes each `setOutcomes` newly recorded (live metrics). */
  onRecorded?: (moved: Readonly<Record<string, number>>) => void;
}

export function createRunStore(deps: RunStoreOptions): RunStore {
  const keys = runKeys(
    deps.redis,
    deps.prefix,
    deps.retentionSeconds ?? 14 * 24 * 3600,
    deps.rowStateTtlSeconds ?? 7 * 24 * 3600,
  );
  const records = createRunRecords(keys);
  const jobs = createJobState(keys, records);
  return {
    ...records,
    ...createOutcomeLedger(keys, deps.onRecorded),
    ...createRunReports(keys, records),
    ...jobs,
    async fail(runId, message) {
      await records.update(runId, { status: 'failed', message, finishedAt: new Date().toISOString() });
      const record = await records.get(runId);
      // A run that failed before it started reading has nothing to resume: the next run
      // starts anew, and does not carry its old error and counts along.
      if (record !== undefined && record.mode !== 'pull' && record.startedAt !== undefined)
        await jobs.keepResumable(record.job, runId, keys.rowStateTtl);
    },
  };
}
