import type { RedisClient } from './redis-types.ts';
import { stateKey } from './redis-types.ts';

/** Where one run store keeps what, and for how long: shared by its parts. */
export interface RunKeys {
  redis: RedisClient;
  /** Run records, reports and the runs index keep this long (seconds). */
  retentionSeconds: number;
  /** Row outcomes of a failed or abandoned run keep this long (seconds). */
  rowStateTtl: number;
  run(runId: string): string;
  /** The run's outcome ledger: a hash of segments, one byte per row (outcome-ledger.ts). */
  ledger(runId: string): string;
  counts(runId: string): string;
  seen(runId: string): string;
  runs: string;
  job(job: string): string;
  jobLock(job: string): string;
}

export function runKeys(
  redis: RedisClient,
  prefix: string,
  retentionSeconds: number,
  rowStateTtl: number,
): RunKeys {
  return {
    redis,
    retentionSeconds,
    rowStateTtl,
    run: (runId) => stateKey(prefix, 'run', runId),
    ledger: (runId) => stateKey(prefix, 'run', runId, 'ledger'),
    counts: (runId) => stateKey(prefix, 'run', runId, 'counts'),
    seen: (runId) => stateKey(prefix, 'run', runId, 'seen'),
    runs: stateKey(prefix, 'runs'),
    job: (job) => stateKey(prefix, 'job', job),
    jobLock: (job) => stateKey(prefix, 'job', job, 'active'),
  };
}
