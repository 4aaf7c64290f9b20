/**
 * The reading step of a push run: how it matches keys (decided once per run), then its
 * source fanned out in batch jobs, or its backfill range in chunk jobs. Apart from the
 * processor so that a resumed read is seen to decide exactly what the first one did.
 */
import { decideKeyScan, describeScan, scanKeys } from '../sync/write/key-scan.ts';
import type { KeyScanTarget } from '../sync/write/key-scan.ts';
import type { PreparedRun } from '../sync/prepare/prepare-run.ts';
import type { IndexAdoptions } from '../sync/state/index-adoption.ts';
import type { RunRecord, RunStore } from '../sync/state/run-store.ts';
import type { SyncContext } from '../sync/write/sync-context.ts';
import { addChunkJobs } from './chunk-jobs.ts';
import { reviveFailedChildren } from './failed-children.ts';
import type { RunQueues } from './failed-children.ts';
import { fanOutBatches } from './fan-out.ts';
import type { FanOutDeps } from './fan-out.ts';
import type { HintRuns } from './hint-run.ts';
import { openSource } from '../sync/read/open-source.ts';
import type { OpenSourceDeps } from '../sync/read/open-source.ts';
import type { RunScope } from './run-scope.ts';
import type { WithTraffic } from './runtime-types.ts';

/** How often a key scan's progress is written to the run record. */
const SCAN_PROGRESS_EVERY_MS = 500;

/** The runtime's part in reading: the source opened, the rows fanned out, the key scan counted. */
export interface RunReadRuntime extends OpenSourceDeps, FanOutDeps {
  runs: RunStore;
  withTraffic: WithTraffic;
}

/** What reading a run opens its source and fans out with. */
export interface RunReadDeps {
  rt: RunReadRuntime;
  queues: RunQueues;
  hints: Pick<HintRuns, 'source'>;
  adoptions: IndexAdoptions;
}

/** Reading: the key index (once per run), then the source fanned out in batches. */
export async function readRun(
  deps: RunReadDeps,
  scope: RunScope,
  run: PreparedRun,
  ctx: SyncContext,
  started: RunRecord,
): Promise<void> {
  const { rt, queues, hints } = deps;
  const { job, runId, log, signal } = scope;
  const structure = run.prepared!.structure;
  await rt.runs.update(runId, {
    status: 'running',
    startedAt: started.startedAt ?? new Date().toISOString(),
    mode: ctx.mode,
    worksheet: structure.name,
    ...(job.data.full === true ? { compare: 'full' as const } : {}),
  });
  log.info({ mode: ctx.mode, worksheet: structure.name, trigger: job.data.trigger }, 'run started');
  // Decided once per run: a reader restarted after a crash must not rebuild the index
  // while batches of its first attempt are still writing (it would drop their entries).
  const lookingUp = ctx.index !== undefined && (await matchKeys(deps, scope, run, ctx, started)) === 'index';
  // Keys the index does not know are looked up by the run's batches (they read the
  // run record); the reader settles rows as they would.
  const readCtx: SyncContext = lookingUp ? { ...ctx, indexComplete: false } : ctx;
  // Read again (a resume): the batch and chunk jobs that failed every attempt are
  // taken back first, or their ids would keep the rows this read adds out.
  await reviveFailedChildren(job, queues, rt.redis);
  if (job.data.range !== undefined) {
    // A backfill: one chunk job per piece of the range, each fanning out its own batches.
    await addChunkJobs(rt.runs, queues.runs, job, runId, job.data.range);
    return;
  }
  const source =
    job.data.trigger === 'hook'
      ? await hints.source(run, ctx, runId, signal)
      : await openSource(rt, run.spec, run.file, job.data, runId, undefined, signal);
  const { progress, batches: batchNo } = await fanOutBatches(
    rt,
    queues.batches,
    job,
    readCtx,
    source,
    signal,
  );
  await rt.runs.update(runId, {
    read: progress.read,
    batches: batchNo,
    ...(progress.cursor === undefined ? {} : { cursor: JSON.stringify(progress.cursor) }),
  });
}

/**
 * How the run matches keys (sync/write/key-scan.ts): the key index as it stands, or a full
 * scan of the worksheet first, with its progress in the run record. Kept in the
 * record, so that a restarted reader and every batch go by the same decision.
 */
async function matchKeys(
  deps: RunReadDeps,
  scope: RunScope,
  run: PreparedRun,
  ctx: SyncContext,
  started: RunRecord,
): Promise<'scan' | 'index'> {
  const { rt, adoptions } = deps;
  const { job, runId, log, traffic } = scope;
  if (started.indexedAt !== undefined) return started.keyMatch ?? 'scan';
  const target: KeyScanTarget = {
    job: run.spec.name,
    mode: ctx.mode,
    structure: run.prepared!.structure,
    plan: run.prepared!.plan,
    index: ctx.index!,
    adoptions,
  };
  const decided = await decideKeyScan(target, {
    full: job.data.full === true,
    // A hint run names a few rows: their keys are looked up, never a full scan.
    replay: job.data.replayIds !== undefined || job.data.trigger === 'hook',
  });
  log.info(
    { keyMatch: decided },
    decided.scan ? 'matching keys by a full scan' : 'matching keys by the index',
  );
  if (decided.scan) {
    let shownAt = 0;
    const built = await rt.withTraffic(traffic, () =>
      scanKeys(target, run.client, async (p) => {
        if (performance.now() - shownAt < SCAN_PROGRESS_EVERY_MS && p.page !== p.pages) return;
        shownAt = performance.now();
        const phase = describeScan(p);
        await rt.runs.update(runId, { phase });
        await job.updateProgress({ phase, page: p.page, pages: p.pages ?? null, rows: p.rows });
      }),
    );
    if (built.duplicates > 0)
      log.warn({ duplicates: built.duplicates }, 'worksheet has rows sharing a key; the oldest is matched');
  }
  const keyMatch = decided.scan ? 'scan' : 'index';
  await rt.runs.update(runId, {
    indexedAt: new Date().toISOString(),
    keyMatch,
    keyMatchReason: decided.reason,
    keyMatchDetail: decided.detail,
    ...(decided.scan ? { phase: '' } : {}),
  });
  return keyMatch;
}
