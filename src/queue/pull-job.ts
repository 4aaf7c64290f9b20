/**
 * The pull path of a run job: a worksheet written out to a sink (csv, Postgres...). No
 * fan-out, the sink is the one writer, so the whole pull runs inside the run job.
 */
import path from 'node:path';
import { UnrecoverableError } from 'bullmq';
import type { PreparedRun } from '../sync/prepare/prepare-run.ts';
import { pullRun } from '../sync/pull/pull-run.ts';
import { decidePullStart } from '../sync/pull/pull-start.ts';
import { readPullColumns } from '../sync/pull/pull-columns.ts';
import { accountingError } from '../sync/check/run-checks.ts';
import { createSink } from '../sync/sinks/create-sink.ts';
import { pullSinkOptions } from '../sync/sinks/sink-mode.ts';
import type { RunRecord, RunStore } from '../sync/state/run-store.ts';
import { verdict } from '../sync/finish/run-verdict.ts';
import { openSource } from '../sync/read/open-source.ts';
import type { OpenSourceDeps } from '../sync/read/open-source.ts';
import type { RunJobData } from './queues.ts';
import type { RunFinish } from './run-finish.ts';
import type { RunScope } from './run-scope.ts';
import type { WithTraffic } from './runtime-types.ts';

/** What a pull reads its worksheet and its cursor with. */
export interface PullJobRuntime extends OpenSourceDeps {
  runs: RunStore;
  withTraffic: WithTraffic;
}

/** Pull jobs write a worksheet out to a sink: no fan-out, the sink is the one writer. */
export async function runPullJob(
  rt: PullJobRuntime,
  scope: RunScope,
  run: PreparedRun,
  record: RunRecord,
  finish: RunFinish['finish'],
): Promise<RunRecord | undefined> {
  const { job, runId, log, traffic, signal } = scope;
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

/** A backfill range as a pull reads it: one read of the whole range, `--from` included. */
function pullRange(
  range: RunJobData['range'],
): { since: string; sinceInclusive: boolean; until: string } | undefined {
  return range === undefined ? undefined : { since: range.from, sinceInclusive: true, until: range.to };
}
