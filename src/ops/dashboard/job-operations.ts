/**
 * What the jobs pages read and do, as a few functions: the pages and their routes see
 * this interface only, and {@link createJobOperations} builds it from the runtime with
 * the same calls the CLI makes (`enqueueRun`, `registerSchedules`, the stores).
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Queue } from 'bullmq';
import { readSetting } from '../../../config/settings.ts';
import type { ErrorCategory } from '../../ground/errors.ts';
import { enqueueRun } from '../../queue/enqueue-run.ts';
import type { EnqueueRunDeps } from '../../queue/enqueue-run.ts';
import { createHookInbox } from '../../queue/hook-inbox.ts';
import type { HookCall } from '../../queue/hook-inbox.ts';
import { notifyKey } from '../../queue/notify-queue.ts';
import { NOTIFY_FAILURES_KEPT } from '../../queue/notify-delivery.ts';
import type { NotifyFailure } from '../../queue/notify-delivery.ts';
import type { RunJobData } from '../../queue/queues.ts';
import { registerSchedules } from '../../queue/schedules.ts';
import type { ScheduleDeps } from '../../queue/schedules.ts';
import type { DeadLetterStore } from '../../sync/state/dead-letter-store.ts';
import { JobSpecError } from '../../sync/job-spec/job-spec-error.ts';
import type { JobSpec } from '../../sync/job-spec/job-spec-schema.ts';
import { readJobSpecText, readJobSpecYaml } from '../../sync/job-spec/load-job-spec.ts';
import { cdcLagOf } from '../../sync/cdc/cdc-lag.ts';
import type { CdcLag, CdcLagThresholds } from '../../sync/cdc/cdc-lag.ts';
import { createCdcState } from '../../sync/cdc/cdc-state.ts';
import { createJobPauses } from '../../sync/state/job-pauses.ts';
import { createRunHistory } from '../../sync/state/run-history.ts';
import type { RunHistoryItem } from '../../sync/state/run-history.ts';

/** A file of the jobs folder: its spec, or why it could not be loaded. */
export interface JobListing {
  name: string;
  spec?: JobSpec;
  /** The file's data as written (no defaults added, `${ENV}` unresolved), for showing it. */
  document?: unknown;
  /** The validation message (it names the file, line and path; never a value's secret). */
  error?: string;
}

/** A job's schedule as the workers run it. */
export interface ScheduleState {
  /** The scheduler's next run (ms since the epoch), when a worker registered one. */
  next?: number;
  /** When an operator paused it (ISO), if paused. */
  pausedAt?: string;
}

/** What the jobs and job pages read. */
export interface JobReads {
  /** Every job file of the jobs folder, by name. */
  listJobs(): Promise<JobListing[]>;
  /** One job, or undefined when there is no such file. */
  getJob(name: string): Promise<JobListing | undefined>;
  /** Registered and paused schedules by job name. */
  schedules(): Promise<Map<string, ScheduleState>>;
  /** The newest `perJob` runs of each job with their reports, newest first. */
  recentRuns(jobs: readonly string[], perJob: number): Promise<Map<string, RunHistoryItem[]>>;
  deadLetterCounts(job: string): Promise<Partial<Record<ErrorCategory, number>>>;
  /** The job's last 20 webhook calls (hook-inbox.ts), newest first. */
  recentHooks(job: string): Promise<HookCall[]>;
  /** The job's last failed notification deliveries (notify-worker.ts), newest first. */
  notifyFailures(job: string): Promise<NotifyFailure[]>;
  /** A postgres-cdc job's lag as its consumer last saved it; undefined when none did within the hour. */
  cdcLag(job: string): Promise<CdcLag | undefined>;
}

/** What the job page's buttons do (only when the dashboard allows writes). */
export interface JobActions {
  /** Queues a run for the workers; resolves to its run id. */
  runNow(job: string): Promise<string>;
  /** Removes the job's scheduler and keeps it off across worker restarts. */
  pause(job: string): Promise<void>;
  /** Registers the job's scheduler again from its spec. */
  resume(job: string): Promise<void>;
  /** Queues one replay run of all the job's dead letters; no run when it has none. */
  replayDeadLetters(job: string): Promise<{ runId?: string; count: number }>;
}

/** Both sides, as the dashboard gets them. */
export interface JobOperations extends JobReads, JobActions {}

const JOB_FILE = /^([a-z0-9][a-z0-9_-]*)\.ya?ml$/;

/** The settings' defaults, for a dashboard not given the thresholds. */
const DEFAULT_LAG_THRESHOLDS: CdcLagThresholds = {
  cdcLagWarnSeconds: readSetting('cdcLagWarnSeconds', {})!,
  cdcLagWarnBytes: readSetting('cdcLagWarnBytes', {})!,
};

/** The operations on the runtime's jobs folder, Redis state and runs queue. */
/** The parts of the runtime the jobs pages and their actions use. */
export interface JobOperationsRuntime extends EnqueueRunDeps, ScheduleDeps {
  deadLetters: DeadLetterStore;
}

export function createJobOperations(
  rt: JobOperationsRuntime,
  runsQueue: Queue<RunJobData>,
  lagThresholds: CdcLagThresholds = DEFAULT_LAG_THRESHOLDS,
): JobOperations {
  const pauses = createJobPauses({ redis: rt.redis, prefix: rt.statePrefix });
  const streams = createCdcState({ redis: rt.redis, prefix: rt.statePrefix });
  const history = createRunHistory({ redis: rt.redis, prefix: rt.statePrefix, runs: rt.runs });
  const hooks = createHookInbox({ redis: rt.redis, prefix: rt.statePrefix });

  /**
   * Listings by job name with the file's mtime and size when parsed: the jobs page is
   * viewed often and a spec may be up to 1 MB, so a file is parsed again only once it
   * changed: an edited file shows on the next view.
   */
  const parsed = new Map<string, { file: string; mtimeMs: number; size: number; listing: JobListing }>();

  async function unchanged(name: string): Promise<JobListing | undefined> {
    const cached = parsed.get(name);
    if (cached === undefined) return undefined;
    const info = await stat(cached.file).catch(() => undefined);
    if (info?.mtimeMs === cached.mtimeMs && info.size === cached.size) return cached.listing;
    parsed.delete(name);
    return undefined;
  }

  async function remember(name: string, file: string, listing: JobListing): Promise<JobListing> {
    const info = await stat(file).catch(() => undefined);
    if (info !== undefined) parsed.set(name, { file, mtimeMs: info.mtimeMs, size: info.size, listing });
    return listing;
  }

  async function getJob(name: string): Promise<JobListing | undefined> {
    const hit = await unchanged(name);
    if (hit !== undefined) return hit;
    try {
      const { spec, file } = await rt.loadJob(name);
      // The text as written, for showing; the same size and alias limits as the spec's.
      const { data } = readJobSpecYaml(await readJobSpecText(file), file);
      return await remember(name, file, { name, spec, document: data });
    } catch (err) {
      const message = (err as Error).message;
      // The runtime's own wording for a missing file or a name that is no file name.
      if (/^no job spec |is not a job file name/.test(message)) return undefined;
      // Named as the operator knows it: the file in the jobs folder, not the whole path.
      const listing = { name, error: message.replaceAll(`${rt.jobsDir}${path.sep}`, '') };
      return err instanceof JobSpecError ? remember(name, err.file, listing) : listing;
    }
  }

  return {
    async listJobs() {
      const files = await readdir(rt.jobsDir).catch(() => [] as string[]);
      const names = [
        ...new Set(files.map((f) => JOB_FILE.exec(f)?.[1]).filter((n): n is string => n !== undefined)),
      ].sort();
      const jobs = await Promise.all(names.map(getJob));
      return jobs.filter((j): j is JobListing => j !== undefined);
    },
    getJob,
    async schedules() {
      const [schedulers, paused] = await Promise.all([runsQueue.getJobSchedulers(), pauses.list()]);
      const out = new Map<string, ScheduleState>();
      for (const s of schedulers)
        if (s.key !== undefined) out.set(s.key, s.next === undefined ? {} : { next: s.next });
      for (const [job, at] of paused) out.set(job, { ...out.get(job), pausedAt: at });
      return out;
    },
    recentRuns: (jobs, perJob) => history.recent(jobs, { perJob }),
    deadLetterCounts: (job) => rt.deadLetters.counts({ job }),
    recentHooks: (job) => hooks.recent(job),
    async notifyFailures(job) {
      const list = await rt.redis.lrange(notifyKey(rt, 'failures', job), 0, NOTIFY_FAILURES_KEPT - 1);
      return list.map((text) => JSON.parse(text) as NotifyFailure);
    },
    async cdcLag(job) {
      const status = await streams.status(job);
      return status === undefined ? undefined : cdcLagOf(job, status, lagThresholds);
    },
    runNow: (job) => enqueueRun(rt, job, { trigger: 'enqueue' }),
    async pause(job) {
      await pauses.pause(job);
      await registerSchedules(rt);
    },
    async resume(job) {
      await pauses.resume(job);
      await registerSchedules(rt);
    },
    async replayDeadLetters(job) {
      const ids: string[] = [];
      for await (const entry of rt.deadLetters.iterate({ job })) ids.push(entry.id);
      if (ids.length === 0) return { count: 0 };
      return { runId: await enqueueRun(rt, job, { trigger: 'replay', replayIds: ids }), count: ids.length };
    },
  };
}
