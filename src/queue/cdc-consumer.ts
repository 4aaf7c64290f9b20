/**
 * The consumer of one change-capture job: takes the slot's lock in Redis (one consumer
 * per slot across all workers, renewed while it streams; a dead holder's lock expires and
 * another worker takes over), takes the snapshot on the first run (or `--resnapshot`),
 * then streams changes through the writer. `drain` stops once the stream has delivered
 * every change committed before it started (`run JOB`); `follow` streams until aborted.
 * Keeping the lock lives in cdc-slot-lock.ts, the batch retries in write-with-retries.ts.
 */
import pg from 'pg';
import { createSyncContext, readWorksheetKeys } from '../sync/write/create-sync-context.ts';
import { cdcProblems, isInvalidated, problemForJob, slotState } from '../sync/cdc/cdc-admin.ts';
import { createCdcState } from '../sync/cdc/cdc-state.ts';
import type { CdcState } from '../sync/cdc/cdc-state.ts';
import { startDrainTarget } from '../sync/cdc/drain-target.ts';
import { streamChanges } from '../sync/cdc/stream-changes.ts';
import { takeSnapshot } from '../sync/cdc/take-snapshot.ts';
import type { Change } from '../sync/cdc/write-changes.ts';
import type { WorksheetKeys } from '../sync/cdc/apply-truncate.ts';
import type { JobSpec } from '../sync/job-spec/job-spec-schema.ts';
import { requireEnvUrl } from '../sync/sources/env-refs.ts';
import { redactSecrets, urlSecrets } from '../sync/sources/redact.ts';
import { SourceError } from '../sync/sources/source-error.ts';
import type { PostgresCdcSourceSpec } from '../sync/sources/source-spec.ts';
import type { SyncContext } from '../sync/write/sync-context.ts';
import { keepSlotLock, waitForSlotLockTurn } from './cdc-slot-lock.ts';
import { startCdcStatusReporter } from './cdc-status-reporter.ts';
import { newRunId } from './run-id.ts';
import type { Runtime } from './runtime-types.ts';
import { writeWithRetries } from './write-with-retries.ts';

export interface CdcConsumerOptions {
  job: string;
  /** `drain`: stop once caught up (`run JOB`); `follow`: until `signal` aborts (workers). */
  mode: 'drain' | 'follow';
  /** Who holds the lock (a worker's id). */
  holder: string;
  /** Start over from a new snapshot (a new slot): what recovers an invalidated slot. */
  resnapshot?: boolean;
  signal: AbortSignal;
  /** @defaultValue 500 */
  maxBatch?: number;
  /** @defaultValue 200 */
  flushMs?: number;
  /** @defaultValue 10000 (drain: 250) */
  heartbeatMs?: number;
  /** @defaultValue 15000 */
  lockTtlMs?: number;
  /** Sees each batch written: its changes' commit times (bench: end-to-end lag). */
  onWritten?(changes: readonly Change[]): void;
}

/** What a consumer did before it stopped. */
export interface CdcSummary {
  runId: string;
  snapshotRows: number;
  changes: number;
  deleted: number;
  deadLettered: number;
  /** The lock was held by another consumer (drain mode only; follow mode waits). */
  busy?: string | undefined;
}

/** The job's `source:` as a postgres-cdc spec, or a config error naming the job. */
export function cdcSourceOf(spec: JobSpec): PostgresCdcSourceSpec {
  if (spec.source.type !== 'postgres-cdc')
    throw new SourceError(
      'SOURCE_CONFIG',
      `job ${spec.name} does not read postgres-cdc (source.type is ${spec.source.type})`,
    );
  return spec.source;
}

export async function runCdcConsumer(rt: Runtime, options: CdcConsumerOptions): Promise<CdcSummary> {
  const { spec } = await rt.loadJob(options.job);
  const source = cdcSourceOf(spec);
  const url = requireEnvUrl(rt.env, source.urlEnv, 'postgres-cdc source');
  const who = `postgres-cdc source (${source.urlEnv})`;
  const state = createCdcState({ redis: rt.redis, prefix: rt.statePrefix });
  const log = rt.logger.child({ job: spec.name, slot: source.slot });
  const lockTtl = options.lockTtlMs ?? 15_000;
  const lock = state.lock(source.slot, options.holder, lockTtl);
  if (!(await lock.acquire())) {
    if (options.mode === 'drain')
      return {
        runId: '',
        snapshotRows: 0,
        changes: 0,
        deleted: 0,
        deadLettered: 0,
        busy: await state.lockHolder(source.slot),
      };
    return waitForLock(rt, options);
  }
  const stop = new AbortController();
  const abort = () => stop.abort();
  options.signal.addEventListener('abort', abort, { once: true });
  const stopRenewing = keepSlotLock(lock, lockTtl, () => {
    log.warn('lost the slot lock: another worker streams it now');
    stop.abort();
  });
  const admin = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  admin.on('error', () => undefined);
  const summary: CdcSummary = { runId: '', snapshotRows: 0, changes: 0, deleted: 0, deadLettered: 0 };
  try {
    try {
      await admin.connect();
    } catch (err) {
      throw new SourceError(
        'SOURCE_UNAVAILABLE',
        `${who}: cannot connect: ${redactSecrets((err as Error).message, urlSecrets(url))}`,
      );
    }
    const problems = await cdcProblems(admin, source, { setupDone: false });
    const slot = await slotState(admin, source.slot);
    const invalid = slot !== undefined && isInvalidated(slot);
    // A missing slot is made by the snapshot; an invalidated one too, when asked to.
    const blocking = problems.filter(
      (p) =>
        !p.startsWith(`slot ${source.slot} does not exist`) &&
        !(options.resnapshot === true && p.startsWith(`slot ${source.slot} is invalidated`)),
    );
    if (blocking.length > 0)
      throw new SourceError(
        'SOURCE_CONFIG',
        `${who}: ${blocking.map((p) => problemForJob(p, spec.name)).join('; ')}`,
      );
    let position = await state.position(spec.name);
    if (options.resnapshot === true || position === undefined || slot === undefined || invalid) {
      if (invalid && options.resnapshot !== true)
        throw new SourceError(
          'SOURCE_CONFIG',
          `${who}: slot ${source.slot} is invalidated: run rowbridge run ${spec.name} --resnapshot`,
        );
      position = await snapshot(rt, spec, source, url, state, summary, stop.signal);
    }
    summary.runId = position.runId;
    // A drain delivers every change committed before this point (drain-target.ts).
    const target = options.mode === 'drain' ? await startDrainTarget(admin) : undefined;
    const { ctx, worksheetKeys } = await contextOf(rt, spec, position.runId);
    const table = { table: source.table, keyColumn: source.keyColumn, worksheetKeys };
    await state.setStatus(spec.name, {
      state: 'streaming',
      holder: options.holder,
      confirmedLsn: position.lsn,
    });
    const reporter = startCdcStatusReporter({
      state,
      job: spec.name,
      holder: options.holder,
      startLsn: position.lsn,
      slotLagBytes: async () => (await slotState(admin, source.slot))?.lagBytes ?? undefined,
      changes: () => summary.changes,
      intervalMs: options.mode === 'drain' ? 250 : 2_000,
    });
    try {
      await streamChanges({
        url,
        spec: source,
        startLsn: position.lsn,
        nextIndex: position.nextIndex,
        maxBatch: options.maxBatch ?? 500,
        flushMs: options.flushMs ?? 200,
        heartbeatMs: options.heartbeatMs ?? (options.mode === 'drain' ? 250 : 10_000),
        signal: stop.signal,
        ...(target === undefined ? {} : { caughtUp: (confirmed: string) => target.reached(confirmed) }),
        async write(changes) {
          reporter.writing(changes);
          await writeWithRetries(ctx, spec, table, state, changes, summary, stop.signal, log);
          options.onWritten?.(changes);
        },
        async savePosition(lsn, nextIndex) {
          await state.savePosition(spec.name, { runId: position.runId, lsn, nextIndex, slot: source.slot });
          reporter.acknowledged(lsn);
          // Streaming restarts at this position: outcomes below it are never asked for again.
          await rt.runs.forgetOutcomesBelow(position.runId, nextIndex);
        },
      });
    } finally {
      reporter.stop();
      target?.stop();
    }
    const end = await slotState(admin, source.slot).catch(() => undefined);
    await state.setStatus(spec.name, {
      state: options.mode === 'drain' ? 'stopped' : 'waiting',
      confirmedLsn: end?.confirmedLsn ?? reporter.confirmedLsn(),
      lagBytes: end?.lagBytes ?? 0,
      lagSeconds: 0,
      changes: summary.changes,
    });
    return summary;
  } catch (err) {
    const message = redactSecrets((err as Error).message, urlSecrets(url));
    await state.setStatus(spec.name, { state: 'failed', error: message }).catch(() => undefined);
    throw err;
  } finally {
    stopRenewing();
    options.signal.removeEventListener('abort', abort);
    await admin.end().catch(() => undefined);
    await lock.release().catch(() => undefined);
  }
}

/** Follow mode: polls for the lock until it is free or the worker stops. */
async function waitForLock(rt: Runtime, options: CdcConsumerOptions): Promise<CdcSummary> {
  await waitForSlotLockTurn(options.lockTtlMs ?? 15_000, options.signal);
  if (options.signal.aborted) return { runId: '', snapshotRows: 0, changes: 0, deleted: 0, deadLettered: 0 };
  return runCdcConsumer(rt, options);
}

/** The run's writing context, and how a TRUNCATE reads the worksheet's keys. */
async function contextOf(
  rt: Runtime,
  spec: JobSpec,
  runId: string,
): Promise<{ ctx: SyncContext; worksheetKeys: WorksheetKeys }> {
  const run = await rt.prepareRun(spec.name, runId);
  const prepared = run.prepared!;
  const log = rt.logger.child({ job: spec.name, runId });
  // A stream meets keys made by people or by other jobs: a key the index does not know is looked up.
  const ctx = createSyncContext(
    run.spec,
    prepared,
    { runId, attempt: 1 },
    { ...rt.syncDeps(run.client, log), indexComplete: false },
  );
  return { ctx, worksheetKeys: () => readWorksheetKeys(run.client, prepared.structure, prepared.plan) };
}

/** The first read: a new slot, its snapshot written as changes of a new run. */
async function snapshot(
  rt: Runtime,
  spec: JobSpec,
  source: PostgresCdcSourceSpec,
  url: string,
  state: CdcState,
  summary: CdcSummary,
  signal: AbortSignal,
): Promise<{ runId: string; lsn: string; nextIndex: number; slot: string }> {
  const runId = newRunId(spec.name);
  await rt.runs.create({
    runId,
    job: spec.name,
    trigger: 'cdc',
    mode: spec.target?.mode ?? 'upsert',
    startedAt: new Date().toISOString(),
  });
  await state.setStatus(spec.name, { state: 'snapshot' });
  const { ctx } = await contextOf(rt, spec, runId);
  const table = { table: source.table, keyColumn: source.keyColumn };
  let index = 0;
  const log = rt.logger.child({ job: spec.name, runId });
  // Reported on a timer, as streaming is: a long snapshot is not taken for a dead consumer.
  const beat = setInterval(() => {
    void state
      .setStatus(spec.name, { state: 'snapshot', changes: summary.snapshotRows })
      .catch(() => undefined);
  }, 2_000);
  const lsn = await takeSnapshot({
    url,
    spec: source,
    pageSize: source.batchSize ?? 1000,
    signal,
    async onPage(rows) {
      const changes = rows.map((data): Change => ({
        op: 'upsert',
        index: index++,
        id: String(data[source.keyColumn]),
        data,
      }));
      await writeWithRetries(ctx, spec, table, state, changes, summary, signal, log);
      summary.snapshotRows += rows.length;
    },
  }).finally(() => clearInterval(beat));
  const position = { runId, lsn, nextIndex: index, slot: source.slot };
  await state.savePosition(spec.name, position);
  log.info({ rows: summary.snapshotRows, lsn }, 'snapshot written; streaming from the slot');
  return position;
}
