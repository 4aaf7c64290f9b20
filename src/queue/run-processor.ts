import path from 'node:path';
import { DelayedError, UnrecoverableError, WaitingChildrenError } from 'bullmq';
import type { Job, Queue } from 'bullmq';
import type { WorksheetStructure } from '../api/types.ts';
import { policyOf } from '../ground/errors.ts';
import type { Logger } from '../ground/logger.ts';
import { createSyncContext } from '../sync/create-sync-context.ts';
import { decideKeyScan, describeScan, scanKeys } from '../sync/key-scan.ts';
import type { KeyScanTarget } from '../sync/key-scan.ts';
import { createIndexAdoptions } from '../sync/state/index-adoption.ts';
import { mirrorDeletes } from '../sync/finalize-run.ts';
import type { JobSpec } from '../sync/job-spec/job-spec-schema.ts';
import type { PreparedRun } from '../sync/prepare-run.ts';
import { pullRun } from '../sync/pull-run.ts';
import { decidePullStart } from '../sync/pull-start.ts';
import { splitRange } from '../sync/split-range.ts';
import { createStructureSnapshots } from '../sync/schema-drift.ts';
import { supersedeDeadLetters } from '../sync/supersede-dead-letters.ts';
import { accountingError, unmetExpectations } from '../sync/run-checks.ts';
import { LANDED_OUTCOMES } from '../sync/resolve-dead-letters.ts';
import { createSink } from '../sync/sinks/create-sink.ts';
import { pullSinkOptions } from '../sync/sinks/sink-mode.ts';
import { readPullColumns } from '../sync/pull-columns.ts';
import type { RunRecord } from '../sync/state/run-store.ts';
import type { SyncContext } from '../sync/sync-context.ts';
import { createChunkProcessor } from './chunk-processor.ts';
import { describeUnwritten, findUnwritten, reviveFailedChildren } from './failed-children.ts';
import { fanOutBatches } from './fan-out.ts';
import { createHintRuns } from './hint-run.ts';
import { createHookInbox } from './hook-inbox.ts';
import { openSource } from './open-source.ts';
import type { BatchJobData, RunJobData } from './queues.ts';
import { hasRunWorkers } from './has-run-workers.ts';
import { notifyRunFinished } from './notify-run.ts';
import { requeueRun } from './resume-run.ts';
import { newRunId } from './run-id.ts';
import type { Runtime, Traffic } from './runtime.ts';

/** How often a key scan's progress is written to the run record. */
const SCAN_PROGRESS_EVERY_MS = 500;

/** Why a run job ended without finishing its run. */
type Claim =
  { kind: 'run'; runId: string; record: RunRecord } | { kind: 'done'; record: RunRecord | undefined };

/**
 * The run job: reads the source, maps it, fans out batch jobs as its children (so
 * workers on several machines share one run), then waits for them and finalizes.
 * Steps are kept in the job data, so a run whose worker died resumes where it was:
 * reading again re-adds the same batch job ids (BullMQ ignores duplicates, and rows
 * already written are skipped by their outcomes), finalizing is idempotent.
 *
 * A run that fails for good is recorded `failed`, stays resumable (its row outcomes
 * are kept for ROWBRIDGE_ROW_STATE_TTL_DAYS) and fails its queue job with BullMQ's
 * UnrecoverableError, so the queue and bull-board show it failed. So does a run whose
 * batch (or chunk) job failed every attempt with rows unwritten: it is never recorded
 * complete without them, and its resume reads them again (failed-children.ts).
 */
export function createRunProcessor(rt: Runtime, batches: Queue<BatchJobData>, runQueue: Queue<RunJobData>) {
  const queues = { runs: runQueue, batches };
  const processChunk = createChunkProcessor(rt, queues);
  const snapshots = createStructureSnapshots({ redis: rt.redis, prefix: rt.statePrefix });
  const adoptions = createIndexAdoptions({ redis: rt.redis, prefix: rt.statePrefix });
  const hints = createHintRuns(rt, createHookInbox({ redis: rt.redis, prefix: rt.statePrefix }), runQueue);

  return async function processRun(
    job: Job<RunJobData>,
    token?: string,
    signal?: AbortSignal,
  ): Promise<RunRecord | undefined> {
    if (job.data.chunk !== undefined) {
      await handBackOnAbort(job, token, signal, () => processChunk(job, token, signal));
      return undefined;
    }
    return handBackOnAbort(job, token, signal, () => processRunJob(job, token, signal));
  };

  /** Whether a run holding the job lock has no live queue job any more. */
  async function isAbandoned(holder: string): Promise<boolean> {
    const held = await rt.runs.get(holder);
    if (held?.queueJobId === undefined) return false;
    // A run of `run JOB` lives in that command's own queues: lost only when nobody listens there.
    const queues = held.queues ?? rt.settings.queuePrefix;
    if (queues !== rt.queuePrefix) return !(await hasRunWorkers(rt, queues));
    const queued = await runQueue.getJob(held.queueJobId);
    if (queued === undefined) return true;
    const state = await queued.getState();
    return state === 'failed' || state === 'completed' || state === 'unknown';
  }

  /**
   * The run this queue job works on. A scheduled job (no run id) resumes the job's
   * failed run when there is one, by putting that run's own queue job back, so one run
   * never has two parents for its batches.
   */
  async function claimRun(job: Job<RunJobData>): Promise<Claim> {
    let runId = job.data.runId;
    if (runId === undefined) {
      const resumable = await rt.runs.resumableRun(job.data.job);
      const failed = resumable === undefined ? undefined : await rt.runs.get(resumable);
      if (failed?.status === 'failed') {
        rt.logger.info({ job: job.data.job, runId: failed.runId }, 'a scheduled run resumes the failed run');
        await requeueRun(rt, runQueue, failed);
        return { kind: 'done', record: undefined };
      }
      runId = newRunId(job.data.job);
      await job.updateData({ ...job.data, runId });
    }
    const record =
      (await rt.runs.get(runId)) ??
      (await rt.runs.create({ runId, job: job.data.job, trigger: job.data.trigger }));
    if (record.status === 'completed' || record.status === 'unmet' || record.status === 'skipped')
      return { kind: 'done', record };
    if (record.status === 'failed') {
      // A batch stopped the run while this job waited for it: the job fails too, and
      // the run stays resumable for the next `run JOB`.
      await rt.runs.releaseJob(job.data.job, runId);
      throw new UnrecoverableError(record.message ?? 'the run was stopped');
    }
    if (record.queueJobId !== job.id && job.id !== undefined)
      await rt.runs.update(runId, { queueJobId: job.id });
    return { kind: 'run', runId, record };
  }

  /** One active run per job; a holder whose queue job ended without it is released. */
  async function acquire(jobName: string, runId: string): Promise<string | undefined> {
    let holder = await rt.runs.acquireJob(jobName, runId);
    if (holder !== undefined && (await isAbandoned(holder))) {
      // BullMQ gave up on that run's job (stalled too often, or removed) without our
      // code running: the run can never finish, so it must not block the job forever.
      await rt.runs.fail(
        holder,
        'its queue job ended without finishing the run (the worker was lost too often)',
      );
      holder = await rt.runs.acquireJob(jobName, runId);
    }
    return holder;
  }

  async function processRunJob(
    job: Job<RunJobData>,
    token?: string,
    signal?: AbortSignal,
  ): Promise<RunRecord | undefined> {
    const traffic: Traffic = { requests: 0, throttled: 0, retries: 0 };
    const claim = await claimRun(job);
    if (claim.kind === 'done') return claim.record;
    const { runId, record } = claim;
    traffic.run = { job: job.data.job, runId };
    const log = rt.logger.child({ job: job.data.job, runId });

    const holder = await acquire(job.data.job, runId);
    // A hint run waits for the run ahead of it: its hints are not in that run.
    if (holder !== undefined && job.data.trigger === 'hook')
      return delay(job, token, await hints.retryDelayMs(job.data.job));
    if (holder === undefined && job.data.trigger === 'hook' && job.data.step !== 'finalize') {
      const gate = await hints.begin(job.data.job, runId);
      if (gate.go !== 'read') {
        await rt.runs.releaseJob(job.data.job, runId);
        if (gate.go === 'wait') return delay(job, token, gate.delayMs);
        await rt.runs.update(runId, {
          status: 'skipped',
          message: 'its hints were taken by an earlier run',
          finishedAt: new Date().toISOString(),
        });
        return rt.runs.get(runId);
      }
    }
    if (holder !== undefined) {
      await rt.runs.update(runId, {
        status: 'skipped',
        message: `run ${holder} of job ${job.data.job} is still active`,
        finishedAt: new Date().toISOString(),
      });
      return rt.runs.get(runId);
    }

    try {
      const run = await rt.withTraffic(traffic, () => rt.prepareRun(job.data.job, runId));
      if (run.spec.sink !== undefined) return await runPullJob(run);
      if (run.spec.target?.mode === 'two-way') {
        // The two-way engine and its database clients load only for a two-way job.
        const { runTwoWayJob } = await import('./two-way-job.ts');
        await rt.withTraffic(traffic, () => runTwoWayJob(rt, run, runId, record.startedAt, log));
        return await finish();
      }
      const ctx = createSyncContext(
        run.spec,
        run.prepared!,
        { runId, attempt: job.attemptsMade + 1 },
        { ...rt.syncDeps(run.client, log), ...(job.data.full === true ? { full: true } : {}) },
      );
      if (job.data.step !== 'finalize') {
        await read(run, ctx, record);
        await job.updateData({ ...job.data, runId, step: 'finalize' });
        if (token !== undefined && (await job.moveToWaitingChildren(token))) throw new WaitingChildrenError();
      }
      return await finalize(ctx, run.spec, run.prepared!.structure);
    } catch (err) {
      if (
        err instanceof WaitingChildrenError ||
        err instanceof DelayedError ||
        err instanceof UnrecoverableError ||
        signal?.aborted === true
      )
        throw err;
      const policy = policyOf(err);
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (!lastAttempt && policy.run === 'retry') throw err;
      // Deterministic (a missing file, a bad header, a 401) or out of attempts: the run
      // fails now and stays resumable; the queue job fails for good.
      const message = (err as Error).message;
      log.error({ err: { message, category: policy.category } }, 'run failed');
      await rt.runs.fail(runId, message);
      const code = (err as { code?: unknown }).code;
      await rt.runs.update(runId, {
        category: policy.category,
        ...(typeof code === 'string' ? { errorCode: code } : {}),
      });
      await finish();
      throw new UnrecoverableError(message);
    } finally {
      await flushTraffic();
    }

    /** Reading: the key index (once per run), then the source fanned out in batches. */
    async function read(run: PreparedRun, ctx: SyncContext, started: RunRecord): Promise<void> {
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
      const lookingUp = ctx.index !== undefined && (await matchKeys(run, ctx, started)) === 'index';
      // Keys the index does not know are looked up by the run's batches (they read the
      // run record); the reader settles rows as they would.
      const readCtx: SyncContext = lookingUp ? { ...ctx, indexComplete: false } : ctx;
      // Read again (a resume): the batch and chunk jobs that failed every attempt are
      // taken back first, or their ids would keep the rows this read adds out.
      await reviveFailedChildren(job, queues, rt.redis);
      if (job.data.range !== undefined) {
        // A backfill: one chunk job per piece of the range, each fanning out its own batches.
        await addChunkJobs(job, job.data.range);
        return;
      }
      const source =
        job.data.trigger === 'hook'
          ? await hints.source(run, ctx, runId, signal)
          : await openSource(rt, run.spec, run.file, job.data, runId, undefined, signal);
      const { progress, batches: batchNo } = await fanOutBatches(rt, batches, job, readCtx, source, signal);
      await rt.runs.update(runId, {
        read: progress.read,
        batches: batchNo,
        ...(progress.cursor === undefined ? {} : { cursor: JSON.stringify(progress.cursor) }),
      });
    }

    /**
     * How the run matches keys (sync/key-scan.ts): the key index as it stands, or a full
     * scan of the worksheet first, with its progress in the run record. Kept in the
     * record, so that a restarted reader and every batch go by the same decision.
     */
    async function matchKeys(
      run: PreparedRun,
      ctx: SyncContext,
      started: RunRecord,
    ): Promise<'scan' | 'index'> {
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
          log.warn(
            { duplicates: built.duplicates },
            'worksheet has rows sharing a key; the oldest is matched',
          );
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

    async function finalize(
      ctx: SyncContext,
      spec: JobSpec,
      structure: WorksheetStructure,
    ): Promise<RunRecord | undefined> {
      const current = await rt.runs.get(runId);
      if (current?.status === 'failed') {
        // A batch stopped the run (auth, permission, quota...): the queue job fails too.
        await finish();
        throw new UnrecoverableError(current.message ?? 'the run was stopped');
      }
      // A batch or chunk job that failed every attempt did not hold the run up (its
      // failure is ignored so that the others go on), but its rows were not written: the
      // run fails resumable, before deletes or the cursor, and a resume writes them.
      const unwritten = await findUnwritten(job, queues, rt.runs, runId);
      if (unwritten !== undefined) {
        const message = describeUnwritten(unwritten, job.data.job);
        await rt.runs.fail(runId, message);
        await finish();
        throw new UnrecoverableError(message);
      }
      // Every row read has one outcome, or the run is no success (issue 27 §2): checked
      // before deletes and the cursor, so a miscounted run changes nothing more.
      const miscount = accountingError(await rt.runs.report(runId));
      if (miscount !== undefined) {
        await rt.runs.fail(runId, miscount);
        await finish();
        throw new UnrecoverableError(miscount);
      }
      await rt.runs.update(runId, { status: 'finalizing' });
      // A replay read dead letters, not the source: what it did not see is not gone.
      // A hint run deletes only the rows it named that the source no longer has.
      const result: { deleted: number; refused?: string } =
        job.data.trigger === 'hook'
          ? await rt.withTraffic(traffic, () => hints.finish(spec, ctx, runId))
          : job.data.replayIds === undefined
            ? await rt.withTraffic(traffic, () => mirrorDeletes(spec, ctx, job.data.force === true))
            : { deleted: 0 };
      if (result.refused !== undefined) {
        await rt.runs.fail(runId, result.refused);
        await finish();
        throw new UnrecoverableError(result.refused);
      }
      if (
        spec.incremental !== undefined &&
        current?.cursor !== undefined &&
        job.data.replayIds === undefined &&
        job.data.trigger !== 'hook' &&
        job.data.range === undefined
      ) {
        // Saved only now that every write the cursor covers is confirmed. A backfill
        // re-reads history and leaves the job's cursor where it was.
        await rt.runs.setCursor(spec.name, current.cursor);
      }
      if (job.data.replayIds !== undefined) await settleReplay(rt, spec.name, runId, job.data.replayIds);
      const superseded = await supersedeDeadLetters(rt.deadLetters, ctx.plan, spec.name, runId);
      if (superseded > 0)
        log.info({ superseded }, 'older dead letters of rows that failed again were replaced');
      // The structure this mapping last worked with: the next run compares against it.
      await snapshots.save(spec.name, structure, spec.mappings);
      await rt.runs.update(runId, {
        ...verdict(spec, { ...(await rt.runs.report(runId)), deleted: result.deleted }),
        deleted: result.deleted,
        finishedAt: new Date().toISOString(),
      });
      return finish();
    }

    /** Pull jobs write a worksheet out to a sink: no fan-out, the sink is the one writer. */
    async function runPullJob(run: PreparedRun): Promise<RunRecord | undefined> {
      const { spec } = run;
      await rt.runs.update(runId, {
        status: 'running',
        startedAt: record.startedAt ?? new Date().toISOString(),
        mode: 'pull',
      });
      const sinkDeps = { env: rt.env, baseDir: path.dirname(run.file) };
      const range = pullRange(job.data.range);
      const start = await decidePullStart(
        spec,
        { cursor: await rt.runs.getCursor(spec.name), shape: await rt.runs.getCursorShape(spec.name) },
        { full: job.data.full === true, sinkDeps },
      );
      if (start.reason !== undefined) {
        log.warn({ reason: start.reason }, `pull ${spec.name} starts from the beginning`);
        await rt.runs.update(runId, { startedOver: start.reason });
      }
      const columns = await readPullColumns(
        rt.clientFor(spec.source.type === 'worksheet' ? spec.source.credentialsEnvPrefix : undefined),
        spec,
      );
      const source = await openSource(
        rt,
        spec,
        run.file,
        { ...job.data, fromStart: start.fromStart, lists: columns.lists },
        runId,
        range,
        signal,
      );
      const sinkOptions = pullSinkOptions(spec);
      const sink = createSink(spec.sink!, {
        ...sinkDeps,
        ...sinkOptions,
        columnTypes: columns.types,
        // Starting over rebuilds the sink; a backfill range merges its rows into it.
        ...(start.fromStart ? { write: 'replace' as const } : {}),
        ...(range === undefined ? {} : { write: 'merge' as const }),
      });
      const progress = await rt.withTraffic(traffic, () =>
        pullRun(spec, source, sink, {
          timeForm: columns.timeForm,
          onBatch: (p) => job.updateProgress({ read: p.read, written: p.written }),
        }),
      );
      await rt.runs.addWritten(runId, progress.written);
      // A backfill range re-reads the past: the job's cursor stays where its runs left it.
      if (spec.incremental !== undefined && progress.cursor !== undefined && range === undefined) {
        await rt.runs.setCursor(spec.name, JSON.stringify(progress.cursor), start.shape);
      }
      const counts = { ...(await rt.runs.report(runId)), read: progress.read };
      const miscount = accountingError(counts);
      if (miscount !== undefined) {
        await rt.runs.fail(runId, miscount);
        await finish();
        throw new UnrecoverableError(miscount);
      }
      await rt.runs.update(runId, {
        ...verdict(spec, counts),
        read: progress.read,
        finishedAt: new Date().toISOString(),
      });
      return finish();
    }

    async function addChunkJobs(
      parent: Job<RunJobData>,
      range: NonNullable<RunJobData['range']>,
    ): Promise<void> {
      const pieces = splitRange(range.from, range.to, range.chunks);
      await rt.runs.update(runId, { range: `${range.from}..${range.to} in ${pieces.length} chunks` });
      for (const [i, piece] of pieces.entries()) {
        await runQueue.add(
          'chunk',
          { runId, job: parent.data.job, trigger: parent.data.trigger, chunk: { no: i, ...piece } },
          {
            jobId: `${runId}-chunk${i}`,
            parent: { id: parent.id!, queue: parent.queueQualifiedName },
            attempts: 3,
            backoff: { type: 'exponential', delay: 2000 },
            removeOnComplete: true,
            removeOnFail: { age: 7 * 86_400, count: 1000 },
            ignoreDependencyOnFailure: true,
          },
        );
      }
    }

    /** Adds this process's requests for the run to its report, once. */
    async function flushTraffic(): Promise<void> {
      if (traffic.requests + traffic.retries === 0) return;
      const counted = { ...traffic };
      Object.assign(traffic, { requests: 0, throttled: 0, retries: 0 });
      await rt.runs.addTraffic(runId, counted);
    }

    /**
     * Releases the job. A completed run drops its row bookkeeping; any other end keeps
     * it (with an expiry) and names the run as the job's resumable one.
     */
    async function finish(): Promise<RunRecord | undefined> {
      await flushTraffic();
      await rt.runs.releaseJob(job.data.job, runId);
      const final = await rt.runs.get(runId);
      // A run short of its expectations wrote every row all the same: its state goes too.
      if (final?.status === 'completed' || final?.status === 'unmet') {
        await rt.runs.dropRowState(runId);
        // The job is whole again: an older failed run of it is no longer to be resumed.
        const stale = await rt.runs.takeResumable(job.data.job);
        if (stale !== undefined && stale !== runId) await rt.runs.dropRowState(stale);
      }
      logFinished(log, final, await rt.runs.report(runId));
      // A notifier that fails never fails the run: it shows in the notify queue and the log.
      await notifyRunFinished(rt, job.data.job, runId).catch((err: unknown) =>
        log.warn({ err: { message: (err as Error).message } }, 'notifications of the run not queued'),
      );
      return final;
    }
  }
}

/** `completed`, or `unmet` with what the job's `expect:` missed (docs/expectations.md). */
function verdict(
  spec: JobSpec,
  counts: Parameters<typeof unmetExpectations>[1],
): { status: 'completed' } | { status: 'unmet'; message: string; category: string } {
  const unmet = unmetExpectations(spec.expect, counts);
  if (unmet.length === 0) return { status: 'completed' };
  return { status: 'unmet', message: `expectation not met: ${unmet.join('; ')}`, category: 'expectation' };
}

function logFinished(log: Logger, final: RunRecord | undefined, report: unknown): void {
  const level = final?.status === 'completed' ? 'info' : 'error';
  log[level]({ status: final?.status, message: final?.message, report }, 'run finished');
}

/**
 * A worker that is stopping cancels its run and chunk jobs (BullMQ's abort signal):
 * they hand themselves back without being charged an attempt, and whichever worker
 * takes them next reads again (batch ids and row outcomes keep that exactly-once).
 * A job that has failed for good by then (UnrecoverableError: its run is recorded
 * failed) fails: `run` stops its workers as soon as it sees the run failed, which can be
 * a moment before the job's own failure reaches the queue, and the job was then handed
 * back (seen under the full test suite's load).
 */
async function handBackOnAbort<T>(
  job: Job,
  token: string | undefined,
  signal: AbortSignal | undefined,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (signal?.aborted !== true || err instanceof WaitingChildrenError || err instanceof UnrecoverableError)
      throw err;
    await job.moveToDelayed(Date.now(), token);
    throw new DelayedError();
  }
}

/** Puts a run job back to be taken again in `delayMs`, without charging it an attempt. */
async function delay(job: Job<RunJobData>, token: string | undefined, delayMs: number): Promise<never> {
  await job.moveToDelayed(Date.now() + delayMs, token);
  throw new DelayedError();
}

/**
 * Replayed dead letters settle once their row has an outcome. A row that landed
 * resolves its entry (counted in the report, once, even when its batch resolved it by
 * key already). A row that failed again keeps its entry's id: the replay's fresh entry,
 * with the new reason, takes it over. Any other outcome (update mode found no row) only
 * removes the entry. Each step is idempotent, so a retried finalizer does nothing twice.
 */
async function settleReplay(rt: Runtime, job: string, runId: string, ids: string[]): Promise<void> {
  const outcomes = await rt.runs.getOutcomes(
    runId,
    ids.map((_, i) => i),
  );
  const landed: string[] = [];
  const other: string[] = [];
  for (const [i, id] of ids.entries()) {
    const o = outcomes.get(i);
    if (o === undefined || o === 'pending') continue;
    if (LANDED_OUTCOMES.has(o)) landed.push(id);
    else if (o.startsWith('dead:')) await rt.deadLetters.move(`${runId}:${i}`, id);
    else other.push(id);
  }
  await rt.deadLetters.resolve({ job, runId, tallyKey: rt.runs.tallyKey(runId), ids: landed });
  await rt.deadLetters.remove(other);
}

/** A backfill range as a pull reads it: one read of the whole range, `--from` included. */
function pullRange(
  range: RunJobData['range'],
): { since: string; sinceInclusive: boolean; until: string } | undefined {
  return range === undefined ? undefined : { since: range.from, sinceInclusive: true, until: range.to };
}
