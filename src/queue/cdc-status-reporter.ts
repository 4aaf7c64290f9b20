/**
 * What a streaming CDC consumer tells every other process, every few seconds: its state,
 * the slot's lag in bytes (`pg_current_wal_lsn()` minus the confirmed position, asked of
 * the server) and in seconds (since the commit of the oldest change handed to the writer
 * and not yet acknowledged), saved in Redis (cdc-state.ts) where `rowbridge status`, the
 * job page and `/metrics` read it (sync/cdc/cdc-lag.ts).
 */
import type { CdcState } from '../sync/cdc/cdc-state.ts';
import type { Change } from '../sync/cdc/write-changes.ts';

export interface CdcStatusReporterDeps {
  state: Pick<CdcState, 'setStatus'>;
  job: string;
  holder: string;
  /** The position streaming starts at. */
  startLsn: string;
  /** The slot's lag in bytes, asked of the server; undefined when it cannot tell. */
  slotLagBytes(): Promise<number | undefined>;
  /** Changes written so far. */
  changes(): number;
  intervalMs: number;
}

export interface CdcStatusReporter {
  /** A batch goes to the writer: its oldest commit is pending from now on. */
  writing(changes: readonly Change[]): void;
  /** Everything before `lsn` is written and its position saved: nothing is pending. */
  acknowledged(lsn: string): void;
  /** The position last acknowledged. */
  confirmedLsn(): string;
  /** Stops the reports. */
  stop(): void;
}

export function startCdcStatusReporter(deps: CdcStatusReporterDeps): CdcStatusReporter {
  let confirmed = deps.startLsn;
  let pendingSince: number | undefined;
  let lagBytes: number | undefined;
  const report = async () => {
    lagBytes = (await deps.slotLagBytes().catch(() => undefined)) ?? lagBytes;
    await deps.state.setStatus(deps.job, {
      state: 'streaming',
      holder: deps.holder,
      confirmedLsn: confirmed,
      ...(lagBytes === undefined ? {} : { lagBytes }),
      lagSeconds: pendingSince === undefined ? 0 : Math.max(0, (Date.now() - pendingSince) / 1000),
      ...(pendingSince === undefined ? {} : { pendingSince: new Date(pendingSince).toISOString() }),
      changes: deps.changes(),
    });
  };
  const timer = setInterval(() => {
    void report().catch(() => undefined);
  }, deps.intervalMs);
  return {
    writing(changes) {
      if (pendingSince !== undefined) return;
      // Snapshot rows carry no commit time; a change's is its transaction's.
      let oldest: number | undefined;
      for (const change of changes)
        if (change.commitTime !== undefined && (oldest === undefined || change.commitTime < oldest))
          oldest = change.commitTime;
      pendingSince = oldest;
    },
    acknowledged(lsn) {
      confirmed = lsn;
      pendingSince = undefined;
    },
    confirmedLsn: () => confirmed,
    stop: () => clearInterval(timer),
  };
}
