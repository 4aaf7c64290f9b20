/**
 * The reading step of a push run: how it matches keys (decided once per run), then its
 * source fanned out in batch jobs, or its backfill range in chunk jobs. Apart from the
 * processor so that a resumed read is seen to decide exactly what the first one did.
 */
import { matchRunKeys } from '../sync/write/match-run-keys.ts';
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
  // A read resumed after a crash skips the rows of batches its first attempt wrote: an
  // incremental cursor may not pass that attempt's start (worksheet-source.ts).
  const startedAt = started.startedAt ?? new Date().toISOString();
  await rt.runs.update(runId, {
    status: 'running',
    startedAt,
    mode: ctx.mode,
    worksheet: structure.name,
    ...(job.data.full === true ? { compare: 'full' as const } : {}),
  });
  log.info({ mode: ctx.mode, worksheet: structure.name, trigger: job.data.trigger }, 'run started');
  // Decided once per run: a reader restarted after a crash must not rebuild the index
  // while batches of its first attempt are still writing (it would drop their entries).
  const lookingUp =
    ctx.index !== undefined &&
    (await matchRunKeys(
      {
        runs: rt.runs,
        adoptions: deps.adoptions,
        withTraffic: (fn) => rt.withTraffic(scope.traffic, fn),
      },
      {
        runId,
        run,
        ctx,
        started,
        full: job.data.full === true,
        fewRows: job.data.replayIds !== undefined || job.data.trigger === 'hook',
        log,
        onScanProgress: (phase, p) =>
          job.updateProgress({ phase, page: p.page, pages: p.pages ?? null, rows: p.rows }),
      },
    )) === 'index';
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
      : await openSource(
          rt,
          run.spec,
          run.file,
          { ...job.data, readStartedAt: startedAt },
          runId,
          undefined,
          signal,
        );
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
