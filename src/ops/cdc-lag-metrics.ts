/**
 * The lag of every change stream on `/metrics`: `rowbridge_cdc_lag_bytes{job}`,
 * `rowbridge_cdc_lag_seconds{job}` and `rowbridge_cdc_lag_warning{job}` (1 over a threshold
 * of the settings, or when its consumer stopped reporting or failed). Read at scrape time
 * from the statuses the consumers save in Redis, so any process with an ops server shows
 * every stream, whichever worker holds it.
 */
import { cdcLagOf } from '../sync/cdc/cdc-lag.ts';
import type { CdcLag, CdcLagThresholds } from '../sync/cdc/cdc-lag.ts';
import { createCdcState } from '../sync/cdc/cdc-state.ts';
import type { RedisClient } from '../sync/state/redis-types.ts';
import type { MetricFactory } from './metric-factory.ts';

/** Where the statuses are and the thresholds (a runtime has all three). */
export interface CdcLagSource {
  redis: RedisClient;
  statePrefix: string;
  settings: CdcLagThresholds;
}

/** A scrape collects three gauges from one read of the statuses. */
const READING_REUSED_MS = 1000;

/**
 * Declares the gauges; `source()` gives what to read at each scrape (undefined: no series).
 * A Redis that does not answer within `timeoutMs` leaves the series out of that scrape.
 */
export function addCdcLagMetrics(
  metric: MetricFactory,
  source: () => CdcLagSource | undefined,
  timeoutMs: number,
): void {
  let last: { at: number; lags: Promise<CdcLag[]> } | undefined;
  const readings = (): Promise<CdcLag[]> => {
    const now = Date.now();
    if (last !== undefined && now - last.at < READING_REUSED_MS) return last.lags;
    const from = source();
    const lags =
      from === undefined
        ? Promise.resolve([])
        : withTimeout(
            createCdcState({ redis: from.redis, prefix: from.statePrefix }).statuses(),
            timeoutMs,
          ).then(
            (statuses) => [...statuses].map(([job, status]) => cdcLagOf(job, status, from.settings, now)),
            () => [],
          );
    last = { at: now, lags };
    return lags;
  };
  metric.gauge(
    'rowbridge_cdc_lag_bytes',
    "WAL a postgres-cdc job's slot is behind the server (pg_current_wal_lsn() minus its confirmed position), as last reported.",
    ['job'],
    async (gauge) => {
      gauge.reset();
      for (const lag of await readings()) if (lag.bytes !== undefined) gauge.set({ job: lag.job }, lag.bytes);
    },
  );
  metric.gauge(
    'rowbridge_cdc_lag_seconds',
    'Age of the oldest change of a postgres-cdc job read and not yet written (0 when none).',
    ['job'],
    async (gauge) => {
      gauge.reset();
      for (const lag of await readings()) gauge.set({ job: lag.job }, lag.seconds);
    },
  );
  metric.gauge(
    'rowbridge_cdc_lag_warning',
    '1 when a postgres-cdc job is over ROWBRIDGE_CDC_LAG_WARN_SECONDS or _BYTES, failed, or its consumer stopped reporting.',
    ['job'],
    async (gauge) => {
      gauge.reset();
      for (const lag of await readings()) gauge.set({ job: lag.job }, lag.warnings.length > 0 ? 1 : 0);
    },
  );
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
