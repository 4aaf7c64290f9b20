import type { PlatformClient } from '../../api/create-platform-client.ts';
import type { WorksheetStructure } from '../../api/types.ts';
import { keyFields } from '../mapping/compose-key.ts';
import type { MappingPlan, SyncMode } from '../mapping/plan-types.ts';
import { readWorksheetKeys } from './create-sync-context.ts';
import type { IndexAdoption, IndexAdoptions } from '../state/index-adoption.ts';
import { indexFormatOf } from '../state/key-index.ts';
import type { KeyIndex } from '../state/key-index.ts';

/**
 * Why a run read the whole worksheet to match keys (`scan: true`), or why it did not.
 * `first-run`: no full scan is on record; `full`: `run --full`; `mirror`: deletes need
 * every key; `index-lost`: the index holds fewer keys than the last scan left;
 * `target-changed`: another worksheet or key; `index-format`: the mode moved between
 * mirror and upsert/update. Without a scan: `adopted` (the index stands), `replay`.
 */
export type KeyMatchReason =
  'first-run' | 'full' | 'mirror' | 'index-lost' | 'target-changed' | 'index-format' | 'adopted' | 'replay';

/** How a run matches source rows to worksheet rows, kept with the run and shown in its report. */
export interface KeyMatch {
  scan: boolean;
  reason: KeyMatchReason;
  /** One sentence for a person. */
  detail: string;
}

/** Where a job's key index is, and what it is for. */
export interface KeyScanTarget {
  job: string;
  mode: SyncMode;
  structure: WorksheetStructure;
  plan: MappingPlan;
  index: KeyIndex;
  adoptions: IndexAdoptions;
}

/**
 * Whether this run must read every row of the worksheet to fill the key index. Without a
 * scan, a key the index does not know is looked up on the platform before any create
 * (write-batch.ts), so a stale or partial index costs requests, never a second row:
 * the stamp only saves the scan, it is never trusted to prove a key absent.
 */
export async function decideKeyScan(
  target: KeyScanTarget,
  run: { full: boolean; replay: boolean },
): Promise<KeyMatch> {
  if (run.replay) return { scan: false, reason: 'replay', detail: 'a replay looks its rows up by key' };
  if (run.full) return { scan: true, reason: 'full', detail: 'run --full compares every row' };
  if (target.mode === 'mirror')
    return {
      scan: true,
      reason: 'mirror',
      detail: 'a mirror needs every key of the worksheet to find the rows to delete',
    };
  const stamp = await target.adoptions.get(target.job);
  if (stamp === undefined)
    return {
      scan: true,
      reason: 'first-run',
      detail:
        'no full scan of the worksheet is on record for this job (its first run, a Redis that lost its data, or an index an older rowbridge built): existing rows are adopted',
    };
  const changed = targetChange(target, stamp);
  if (changed !== undefined) return { scan: true, reason: 'target-changed', detail: changed };
  if (stamp.format !== indexFormatOf(target.mode))
    return {
      scan: true,
      reason: 'index-format',
      detail: `the job's mode now keeps its key index in the ${indexFormatOf(target.mode)} format`,
    };
  const size = await target.index.size();
  if (size < stamp.keys)
    return {
      scan: true,
      reason: 'index-lost',
      detail: `the key index holds ${size} keys where the full scan of ${stamp.at} left ${stamp.keys}: it was deleted or evicted from Redis`,
    };
  return {
    scan: false,
    reason: 'adopted',
    detail: `the key index stands since the full scan of ${stamp.at}; keys it does not know are looked up`,
  };
}

function targetChange(target: KeyScanTarget, stamp: IndexAdoption): string | undefined {
  if (stamp.worksheetId !== target.structure.id)
    return `the job now writes to worksheet ${target.structure.id}, its index was of ${stamp.worksheetId}`;
  const ids = keyFields(target.plan).map((f) => f.id);
  if (ids.join(',') !== stamp.keyFields.join(','))
    return `the job's key is now field${ids.length === 1 ? '' : 's'} ${ids.join(', ')}, its index was of ${stamp.keyFields.join(', ')}`;
  return undefined;
}

/** A scan's progress, as the CLI, `status --json` and the run page show it. */
export interface ScanProgress {
  page: number;
  /** Known from the first page on (the scan asks for the total). */
  pages: number | undefined;
  rows: number;
  rowsPerSecond: number;
  /** Seconds left at the current pace, when the total is known. */
  etaSeconds: number | undefined;
}

/** "matching keys: page 300 of 503, 9,800 rows/s, ETA 21 s" */
export function describeScan(p: ScanProgress): string {
  const of = p.pages === undefined ? '' : ` of ${p.pages}`;
  const eta = p.etaSeconds === undefined ? '' : `, ETA ${Math.ceil(p.etaSeconds)} s`;
  return `matching keys: page ${p.page}${of}, ${Math.round(p.rowsPerSecond).toLocaleString('en')} rows/s${eta}`;
}

/**
 * The full scan: every worksheet row's key into the index (hashes of rows that kept
 * their id are carried over), then the stamp that lets the next runs skip it.
 */
export async function scanKeys(
  target: KeyScanTarget,
  client: PlatformClient,
  onProgress?: (p: ScanProgress) => Promise<void>,
): Promise<{ keys: number; duplicates: number }> {
  const started = performance.now();
  let rows = 0;
  const built = await target.index.rebuild(
    readWorksheetKeys(client, target.structure, target.plan, async (page) => {
      rows += page.rows;
      const seconds = Math.max(0.001, (performance.now() - started) / 1000);
      const rate = rows / seconds;
      const left = page.total === undefined ? undefined : Math.max(0, page.total - rows);
      await onProgress?.({
        page: page.pageIndex,
        pages: page.total === undefined ? undefined : Math.max(1, Math.ceil(page.total / page.pageSize)),
        rows,
        rowsPerSecond: rate,
        etaSeconds: left === undefined || rate === 0 ? undefined : left / rate,
      });
    }),
  );
  await target.adoptions.stamp(target.job, {
    at: new Date().toISOString(),
    worksheetId: target.structure.id,
    keyFields: keyFields(target.plan).map((f) => f.id),
    format: indexFormatOf(target.mode),
    keys: built.keys,
  });
  return built;
}
