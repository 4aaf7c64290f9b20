/**
 * Hint runs: runs started by webhook calls (trigger `hook`). They write only the rows
 * the calls named, read again from the source by id so that a late or replayed call
 * never writes stale data; sources that cannot be read by id give the records the calls
 * carried. The processor asks {@link HintRuns.begin} before reading, reads
 * {@link HintRuns.source}, and calls {@link HintRuns.finish} instead of a mirror's sweep.
 */
import { traceData } from '../ground/tracing.ts';
import type { Queue } from 'bullmq';
import { deleteRowsByKeys } from '../sync/write/delete-by-keys.ts';
import { hookHintKind, hookTriggerOf } from '../sync/job-spec/hook-trigger.ts';
import type { JobSpec } from '../sync/job-spec/job-spec-schema.ts';
import { keyOfRecord } from '../sync/read/key-of-record.ts';
import type { PreparedRun } from '../sync/prepare/prepare-run.ts';
import type { SyncContext } from '../sync/write/sync-context.ts';
import type { Source, SourceRecord } from '../sync/model/types.ts';
import type { HookInbox } from './hook-inbox.ts';
import { readByIds } from '../sync/read/open-source.ts';
import type { RunJobData } from './queues.ts';
import type { EnqueueRunDeps } from './enqueue-run.ts';
import { RUN_JOB_OPTIONS } from './resume-run.ts';
import { newRunId } from './run-id.ts';
import type { Runtime } from './runtime-types.ts';

/** Ids read from the source in one query (as a dead-letter replay does). */
const IDS_PER_READ = 500;
/** A trickle of calls, each within the debounce of the last, is still written this soon. */
const MAX_WAIT_MS = 1500;

/** A job's spec is read again for its hint timing at most this often. */
const TIMING_CACHE_MS = 2000;

interface HintTiming {
  debounceMs: number;
  batchSize: number;
}

/** What the run processor does with a hint run before it reads. */
export type HintGate = { go: 'read' } | { go: 'wait'; delayMs: number } | { go: 'none' };

/** The hint-run steps of the run processor. */
export interface HintRuns {
  /** Takes the pending hints of the job for this run (again the same ones on a retry). */
  begin(job: string, runId: string): Promise<HintGate>;
  /** The rows the run's hints name, as the source has them now. */
  source(run: PreparedRun, ctx: SyncContext, runId: string, signal?: AbortSignal): Promise<Source>;
  /** Deletes (mirror) the rows the source no longer has, then forgets the run's hints. */
  finish(spec: JobSpec, ctx: SyncContext, runId: string): Promise<{ deleted: number }>;
  /** Delay before a hint run that found the job busy tries again. */
  retryDelayMs(job: string): Promise<number>;
}

/** Records and queues a hint run that starts `delayMs` from now. */
export async function queueHintRun(
  rt: Pick<EnqueueRunDeps, 'runs'>,
  runQueue: Queue<RunJobData>,
  job: string,
  runId: string,
  delayMs: number,
): Promise<void> {
  await rt.runs.create({ runId, job, trigger: 'hook' });
  await runQueue.add(
    'run',
    { runId, job, trigger: 'hook', ...traceData() },
    { jobId: runId, ...RUN_JOB_OPTIONS, ...(delayMs > 0 ? { delay: delayMs } : {}) },
  );
}

export function createHintRuns(rt: Runtime, inbox: HookInbox, runQueue: Queue<RunJobData>): HintRuns {
  const timings = new Map<string, { at: number; value: Promise<HintTiming> }>();

  /**
   * A job's debounce and batch size, read from its file at most once per TIMING_CACHE_MS:
   * a burst makes a hint run every debounce, and parsing the spec for each one (twice
   * with a retry's delay) took the event loop from the calls being answered.
   */
  function debounceOf(job: string): Promise<HintTiming> {
    const cached = timings.get(job);
    if (cached !== undefined && performance.now() - cached.at < TIMING_CACHE_MS) return cached.value;
    const value = rt.loadJob(job).then(({ spec }) => ({
      debounceMs: hookTriggerOf(spec)?.debounceMs ?? 0,
      batchSize: spec.target?.batchSize ?? 100,
    }));
    const entry = { at: performance.now(), value };
    timings.set(job, entry);
    value.catch(() => timings.get(job) === entry && timings.delete(job));
    return value;
  }

  return {
    async begin(job, runId) {
      const { debounceMs, batchSize } = await debounceOf(job);
      const taken = await inbox.take(job, runId, {
        batchSize,
        debounceMs,
        maxWaitMs: Math.max(MAX_WAIT_MS, debounceMs * 3),
        nextRunId: newRunId(job),
        ttlSeconds: Math.max(3600, Math.round(rt.settings.rowStateTtlDays * 86_400)),
      });
      // Tokens left pending (a burst still arriving) get a run of their own.
      if (taken.next !== undefined) await queueHintRun(rt, runQueue, job, taken.next, debounceMs);
      if (taken.state === 'ready') return { go: 'read' };
      if (taken.state === 'wait') return { go: 'wait', delayMs: Math.max(50, debounceMs) };
      return { go: 'none' };
    },

    async source(run, ctx, runId, signal) {
      const { spec, file } = run;
      const job = spec.name;
      const taken = await inbox.taken(job, runId);
      const ids = taken.filter((t) => t.token.startsWith('i:')).map((t) => t.token.slice(2));
      const records = taken.filter((t) => t.token.startsWith('r:') && t.data !== undefined);
      const read = ids.length === 0 ? undefined : readByIds(rt, spec, file, signal);
      const mirror = ctx.mode === 'mirror';
      async function* records_(): AsyncGenerator<SourceRecord> {
        let index = 0;
        if (read !== undefined) {
          const found = new Set<string>();
          for (let start = 0; start < ids.length; start += IDS_PER_READ) {
            const chunk = ids.slice(start, start + IDS_PER_READ);
            const keys = new Map<string, string>();
            for await (const record of read(chunk)) {
              const id = record.position.id;
              if (id === undefined || found.has(id)) continue;
              found.add(id);
              if (mirror) {
                const key = keyOfRecord(ctx.plan, record.data);
                if (key !== undefined) keys.set(id, key);
              }
              yield { ...record, position: { ...record.position, index: index++ } };
            }
            await inbox.learnKeys(job, keys);
          }
          await inbox.setGone(
            job,
            runId,
            ids.filter((id) => !found.has(id)),
          );
        }
        for (const r of records)
          yield { data: JSON.parse(r.data!) as Record<string, unknown>, position: { index: index++ } };
      }
      return records_();
    },

    async finish(spec, ctx, runId) {
      const job = spec.name;
      let deleted = 0;
      if (ctx.mode === 'mirror') {
        const gone = await inbox.gone(job, runId);
        const known = await inbox.knownKeys(job, gone);
        const keys = gone
          .map((id) => known.get(id) ?? keyOfRecord(ctx.plan, idRecord(spec, id)))
          .filter((k): k is string => k !== undefined);
        deleted = await deleteRowsByKeys(spec, ctx, keys);
        await inbox.forgetKeys(job, gone);
        if (keys.length < gone.length)
          rt.logger.warn(
            { job, runId, unknown: gone.length - keys.length },
            'rows named by hooks are gone from the source, but their key is not known: left for the next full run',
          );
      }
      await inbox.ack(job, runId);
      return { deleted };
    },

    async retryDelayMs(job) {
      return Math.max(100, (await debounceOf(job)).debounceMs);
    },
  };
}

/** The record a gone row would have held as far as its id goes: its key, where the key is the id. */
function idRecord(spec: JobSpec, id: string): Record<string, unknown> {
  const kind = hookHintKind(spec);
  if (kind === 'rowId') return { rowid: id, _id: id };
  const source = spec.source;
  if (kind === 'key' && (source.type === 'postgres' || source.type === 'mysql') && source.keyColumn)
    return { [source.keyColumn]: id };
  return {};
}
