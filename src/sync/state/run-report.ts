import type { ErrorCategory } from '../../ground/errors.ts';
import type { RunKeys } from './run-keys.ts';
import type { RunRecords } from './run-records.ts';

/** The run report (issue #4): counts of rows by outcome, requests, and timing. */
export interface RunReport {
  read: number;
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
  deleted: number;
  deadLettered: Partial<Record<ErrorCategory, number>>;
  deadLetteredTotal: number;
  /** Older dead letters of the job whose row landed in this run, removed from the store. */
  resolved: number;
  requests: number;
  throttled: number;
  retries: number;
  batches: number;
  durationMs: number;
  /** Push runs with a key: whether the run read the whole worksheet to match keys, and why. */
  keyMatch?: { scan: boolean; reason: string; detail: string };
}

/** A run's report: the ledger's counters, its traffic, and its record's timing. */
export interface RunReports {
  /** Pull runs: rows written to the sink (reported as created). */
  addWritten(runId: string, rows: number): Promise<void>;
  /** Requests, throttled answers and retries made for the run. */
  addTraffic(runId: string, traffic: { requests: number; throttled: number; retries: number }): Promise<void>;
  report(runId: string): Promise<RunReport>;
}

export function createRunReports(keys: RunKeys, records: Pick<RunRecords, 'get'>): RunReports {
  const { redis } = keys;
  return {
    async addWritten(runId, rows) {
      await redis.hincrby(keys.counts(runId), 'created', rows);
    },
    async addTraffic(runId, traffic) {
      await redis
        .multi()
        .hincrby(keys.counts(runId), 'requests', traffic.requests)
        .hincrby(keys.counts(runId), 'throttled', traffic.throttled)
        .hincrby(keys.counts(runId), 'retries', traffic.retries)
        .exec();
    },
    async report(runId) {
      const [counts, record] = await Promise.all([redis.hgetall(keys.counts(runId)), records.get(runId)]);
      const n = (name: string) => Number(counts[name] ?? 0);
      const deadLettered: Partial<Record<ErrorCategory, number>> = {};
      let deadLetteredTotal = 0;
      for (const [name, value] of Object.entries(counts)) {
        if (name.startsWith('dead:') && Number(value) > 0) {
          deadLettered[name.slice(5) as ErrorCategory] = Number(value);
          deadLetteredTotal += Number(value);
        }
      }
      const started = record?.startedAt ? Date.parse(record.startedAt) : undefined;
      const finished = record?.finishedAt ? Date.parse(record.finishedAt) : Date.now();
      return {
        read: record?.read ?? 0,
        created: n('created'),
        updated: n('updated'),
        unchanged: n('unchanged'),
        skipped: n('skipped') + n('duplicate'),
        deleted: record?.deleted ?? 0,
        deadLettered,
        deadLetteredTotal,
        resolved: n('resolved'),
        requests: n('requests'),
        throttled: n('throttled'),
        retries: n('retries'),
        batches: record?.batches ?? 0,
        durationMs: started === undefined ? 0 : finished - started,
        ...(record?.keyMatch === undefined
          ? {}
          : {
              keyMatch: {
                scan: record.keyMatch === 'scan',
                reason: record.keyMatchReason ?? '',
                detail: record.keyMatchDetail ?? '',
              },
            }),
      };
    },
  };
}
