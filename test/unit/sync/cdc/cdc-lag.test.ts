import { describe, expect, it } from 'vitest';
import { cdcLagOf, describeCdcLag, formatBytes } from '../../../../src/sync/cdc/cdc-lag.ts';
import type { CdcStatus } from '../../../../src/sync/cdc/cdc-state.ts';

const NOW = Date.parse('2026-11-27T03:00:00.000Z');
const LIMITS = { cdcLagWarnSeconds: 60, cdcLagWarnBytes: 1024 * 1024 };
const at = (secondsAgo: number) => new Date(NOW - secondsAgo * 1000).toISOString();

const streaming = (extra: Partial<CdcStatus> = {}): CdcStatus => ({
  state: 'streaming',
  holder: 'host:42',
  lagBytes: 120,
  lagSeconds: 0,
  updatedAt: at(1),
  ...extra,
});

describe('cdcLagOf', () => {
  it('a stream within its thresholds: its figures, no warning', () => {
    const lag = cdcLagOf('orders', streaming(), LIMITS, NOW);
    expect(lag).toEqual({
      job: 'orders',
      state: 'streaming',
      holder: 'host:42',
      bytes: 120,
      seconds: 0,
      reportedAt: at(1),
      warnings: [],
    });
    expect(describeCdcLag(lag)).toBe('streaming by host:42, lag 120 B, 0 s');
  });

  it('counts the seconds of a pending change up to now, past the saved figure', () => {
    const lag = cdcLagOf('orders', streaming({ lagSeconds: 3, pendingSince: at(75) }), LIMITS, NOW);
    expect(lag.seconds).toBe(75);
    expect(lag.warnings).toEqual(['lag 75.0 s is over ROWBRIDGE_CDC_LAG_WARN_SECONDS (60 s)']);
  });

  it('warns over the bytes threshold, naming both sizes', () => {
    const lag = cdcLagOf('orders', streaming({ lagBytes: 3 * 1024 * 1024 }), LIMITS, NOW);
    expect(lag.warnings).toEqual([
      'lag 3.0 MiB of WAL is over ROWBRIDGE_CDC_LAG_WARN_BYTES (1.0 MiB): the server keeps it until the stream confirms it',
    ]);
  });

  it('warns when a stream said to be streaming stopped reporting, not when it stopped on purpose', () => {
    expect(cdcLagOf('orders', streaming({ updatedAt: at(45) }), LIMITS, NOW).warnings).toEqual([
      'no consumer has reported for 45 s: is a worker running this job?',
    ]);
    expect(
      cdcLagOf('orders', streaming({ state: 'stopped', updatedAt: at(600) }), LIMITS, NOW).warnings,
    ).toEqual([]);
  });

  it('a failed stream is a warning with its error', () => {
    const lag = cdcLagOf(
      'orders',
      { state: 'failed', error: 'slot rb is invalidated', updatedAt: at(5) },
      LIMITS,
      NOW,
    );
    expect(lag.bytes).toBeUndefined();
    expect(lag.warnings).toEqual(['the stream failed: slot rb is invalidated']);
    expect(describeCdcLag(lag)).toBe('failed, lag -, 0 s');
  });
});

describe('formatBytes', () => {
  it('uses binary units with one decimal under 10', () => {
    expect([0, 1023, 1024, 15 * 1024, 1536 * 1024 * 1024].map(formatBytes)).toEqual([
      '0 B',
      '1023 B',
      '1.0 kiB',
      '15 kiB',
      '1.5 GiB',
    ]);
  });
});
