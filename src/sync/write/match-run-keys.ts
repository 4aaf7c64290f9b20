/**
 * How a push run matches keys, decided once per run and kept in its record: the key
 * index as it stands, or a full scan of the worksheet first. A reader restarted after a
 * crash, and every batch, go by the same decision.
 */
import type { Logger } from '../../ground/logger.ts';
import type { PreparedRun } from '../prepare/prepare-run.ts';
import type { IndexAdoptions } from '../state/index-adoption.ts';
import type { RunRecord, RunStore } from '../state/run-store.ts';
import { decideKeyScan, describeScan, scanKeys } from './key-scan.ts';
import type { KeyScanTarget, ScanProgress } from './key-scan.ts';
import type { SyncContext } from './sync-context.ts';

/** How often a key scan's progress is written to the run record. */
const SCAN_PROGRESS_EVERY_MS = 500;

/** What deciding and scanning read and record. */
export interface MatchRunKeysDeps {
  runs: Pick<RunStore, 'update'>;
  adoptions: IndexAdoptions;
  /** Runs `fn` with the platform requests it makes counted to the run. */
  withTraffic<T>(fn: () => Promise<T>): Promise<T>;
}

/** The run whose keys are matched, and how it was started. */
export interface KeyMatchRun {
  runId: string;
  run: PreparedRun;
  ctx: SyncContext;
  /** The run's record as the read found it: a decision already made is kept. */
  started: RunRecord;
  /** `run --full`: compare with what the worksheet holds. */
  full: boolean;
  /** A replay or a hint run names a few rows: their keys are looked up, never a full scan. */
  fewRows: boolean;
  log: Logger;
  /** Sees a scan's progress, at most every half second (the queue job shows it). */
  onScanProgress(phase: string, p: ScanProgress): Promise<void>;
}

/** The run's key matching (sync/write/key-scan.ts), decided now or read from its record. */
export async function matchRunKeys(deps: MatchRunKeysDeps, match: KeyMatchRun): Promise<'scan' | 'index'> {
  const { runs } = deps;
  const { runId, run, ctx, started, log } = match;
  if (started.indexedAt !== undefined) return started.keyMatch ?? 'scan';
  const target: KeyScanTarget = {
    job: run.spec.name,
    mode: ctx.mode,
    structure: run.prepared!.structure,
    plan: run.prepared!.plan,
    index: ctx.index!,
    adoptions: deps.adoptions,
  };
  const decided = await decideKeyScan(target, { full: match.full, replay: match.fewRows });
  log.info(
    { keyMatch: decided },
    decided.scan ? 'matching keys by a full scan' : 'matching keys by the index',
  );
  if (decided.scan) {
    let shownAt = 0;
    const built = await deps.withTraffic(() =>
      scanKeys(target, run.client, async (p) => {
        if (performance.now() - shownAt < SCAN_PROGRESS_EVERY_MS && p.page !== p.pages) return;
        shownAt = performance.now();
        const phase = describeScan(p);
        await runs.update(runId, { phase });
        await match.onScanProgress(phase, p);
      }),
    );
    if (built.duplicates > 0)
      log.warn({ duplicates: built.duplicates }, 'worksheet has rows sharing a key; the oldest is matched');
  }
  const keyMatch = decided.scan ? 'scan' : 'index';
  await runs.update(runId, {
    indexedAt: new Date().toISOString(),
    keyMatch,
    keyMatchReason: decided.reason,
    keyMatchDetail: decided.detail,
    ...(decided.scan ? { phase: '' } : {}),
  });
  return keyMatch;
}
