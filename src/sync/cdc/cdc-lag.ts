/**
 * How far a change stream is behind, as every reader shows it (`rowbridge status`, the
 * job page, `/metrics`): worked out from the status its consumer saves in Redis every
 * few seconds (cdc-state.ts), so a process that holds no stream can tell. Over a
 * threshold (ROWBRIDGE_CDC_LAG_WARN_SECONDS / _BYTES) it carries a warning saying so.
 */
import type { CdcStatus } from './cdc-state.ts';

/** The thresholds over which lag is a warning (settings `cdcLagWarnSeconds`, `cdcLagWarnBytes`). */
export interface CdcLagThresholds {
  cdcLagWarnSeconds: number;
  cdcLagWarnBytes: number;
}

/** One stream's lag, read from its saved status. */
export interface CdcLag {
  job: string;
  /** `snapshot`, `streaming`, `waiting`, `stopped` or `failed`. */
  state: string;
  holder?: string;
  /** WAL not yet confirmed, as of the last report; undefined before the first. */
  bytes: number | undefined;
  /** Age of the oldest change not yet acknowledged, now (0 when none). */
  seconds: number;
  /** When the consumer last saved its status (ISO). */
  reportedAt: string;
  /** Warnings, one sentence each; empty when the stream is within its thresholds. */
  warnings: string[];
}

/** A streaming consumer saves its status every 2 s: past this, nobody is saving it. */
export const CDC_STATUS_STALE_MS = 30_000;

const ACTIVE = new Set(['snapshot', 'streaming']);

/** `1.5 GiB`, `730 MiB`, `12 kiB`, `512 B`. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'kiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${units[unit]!}`;
}

export function cdcLagOf(
  job: string,
  status: CdcStatus,
  thresholds: CdcLagThresholds,
  now: number = Date.now(),
): CdcLag {
  const reported = Date.parse(status.updatedAt);
  const pending = status.pendingSince === undefined ? undefined : Date.parse(status.pendingSince);
  const seconds =
    pending !== undefined && Number.isFinite(pending)
      ? Math.max(0, (now - pending) / 1000)
      : (status.lagSeconds ?? 0);
  const warnings: string[] = [];
  if (status.state === 'failed') warnings.push(`the stream failed: ${status.error ?? 'no reason saved'}`);
  if (ACTIVE.has(status.state) && now - reported > CDC_STATUS_STALE_MS)
    warnings.push(
      `no consumer has reported for ${Math.round((now - reported) / 1000)} s: is a worker running this job?`,
    );
  if (seconds > thresholds.cdcLagWarnSeconds)
    warnings.push(
      `lag ${seconds.toFixed(1)} s is over ROWBRIDGE_CDC_LAG_WARN_SECONDS (${thresholds.cdcLagWarnSeconds} s)`,
    );
  if (status.lagBytes !== undefined && status.lagBytes > thresholds.cdcLagWarnBytes)
    warnings.push(
      `lag ${formatBytes(status.lagBytes)} of WAL is over ROWBRIDGE_CDC_LAG_WARN_BYTES (${formatBytes(thresholds.cdcLagWarnBytes)}): the server keeps it until the stream confirms it`,
    );
  return {
    job,
    state: status.state,
    ...(status.holder === undefined ? {} : { holder: status.holder }),
    bytes: status.lagBytes,
    seconds: Math.round(seconds * 10) / 10,
    reportedAt: status.updatedAt,
    warnings,
  };
}

/** `streaming by host:1234, lag 12 kiB, 0.4 s` (then the warnings, when asked). */
export function describeCdcLag(lag: CdcLag): string {
  const by = lag.holder === undefined ? '' : ` by ${lag.holder}`;
  const bytes = lag.bytes === undefined ? '-' : formatBytes(lag.bytes);
  return `${lag.state}${by}, lag ${bytes}, ${lag.seconds} s`;
}
