import { ConfigError } from '../ground/errors.ts';
import { traceData } from '../ground/tracing.ts';
import { splitRange } from '../sync/read/split-range.ts';
import { createQueues } from './queues.ts';
import type { QueueConnection, RunJobData } from './queues.ts';
import { RUN_JOB_OPTIONS } from './resume-run.ts';
import { newRunId } from './run-id.ts';
import type { LoadJob } from './runtime-types.ts';
import type { RunStore } from '../sync/state/run-store.ts';

/** What enqueueing reads (the job spec) and writes (the run record, the run queue). */
export interface EnqueueRunDeps extends QueueConnection {
  loadJob: LoadJob;
  runs: RunStore;
}

export interface EnqueueOptions {
  trigger: RunJobData['trigger'];
  force?: boolean;
  /** Compare with what the worksheet holds, ignoring saved content hashes. */
  full?: boolean;
  replayIds?: string[];
  /** A backfill of the cursor range [from, to], read by `chunks` chunk jobs. */
  range?: { from: string; to: string; chunks: number };
  /** Forget the job's saved cursor first: the run reads from the beginning. */
  resetCursor?: boolean;
  /** A singer source: the staged chunk of the tap's records this run reads (src/cli/singer.ts). */
  singerChunk?: string;
}

/**
 * Validates the job spec (so a broken file fails here, not in a worker), records the
 * run and queues it. Job data holds names and options only: credentials stay in the
 * environment of the workers.
 */
export async function enqueueRun(
  rt: EnqueueRunDeps,
  jobName: string,
  options: EnqueueOptions,
): Promise<string> {
  const { spec } = await rt.loadJob(jobName);
  if (options.range !== undefined) {
    if (spec.target?.mode === 'mirror') {
      throw new ConfigError(
        `job ${jobName}: a backfill range needs a pull, or a push job in append, upsert or update mode (a mirror must read the whole source)`,
      );
    }
    const sql = spec.source.type === 'postgres' || spec.source.type === 'mysql';
    if (!sql && spec.source.type !== 'worksheet' && spec.incremental === undefined) {
      throw new ConfigError(
        `job ${jobName}: a backfill range is a range of cursor values: set incremental.cursor in the job`,
      );
    }
    // Fails here, with --from/--to named, rather than in a worker.
    splitRange(options.range.from, options.range.to, options.range.chunks);
  }
  if (options.resetCursor === true) {
    if (spec.incremental === undefined && spec.source.type !== 'worksheet')
      throw new ConfigError(
        `job ${jobName}: --reset-cursor resets an incremental job's cursor, and this job has no incremental.cursor: every run reads from the beginning already`,
      );
    await rt.runs.resetCursor(jobName);
  }
  const runId = newRunId(jobName);
  await rt.runs.create({
    runId,
    job: jobName,
    trigger: options.trigger,
    ...(options.replayIds ? { replay: `${options.replayIds.length} dead letters` } : {}),
  });
  const queues = createQueues(rt);
  try {
    await queues.runs.add(
      'run',
      {
        runId,
        job: jobName,
        trigger: options.trigger,
        ...(options.force === true ? { force: true } : {}),
        ...(options.full === true ? { full: true } : {}),
        ...(options.replayIds === undefined ? {} : { replayIds: options.replayIds }),
        ...(options.range === undefined ? {} : { range: options.range }),
        ...(options.singerChunk === undefined ? {} : { singerChunk: options.singerChunk }),
        ...traceData(),
      },
      { jobId: runId, ...RUN_JOB_OPTIONS },
    );
  } finally {
    await queues.close();
  }
  return runId;
}
