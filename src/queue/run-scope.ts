/**
 * What every step of one run job works with. The run job's steps (claim, read, finalize,
 * pull, finish) live in files of their own; they share this instead of a closure.
 */
import type { Job } from 'bullmq';
import type { Logger } from '../ground/logger.ts';
import type { RunJobData } from './queues.ts';
import type { Traffic } from './runtime-types.ts';

/** One run job in progress: its queue job, its run, its log and the traffic it made. */
export interface RunScope {
  job: Job<RunJobData>;
  runId: string;
  /** The run's logger (a child with `{job, runId}`). */
  log: Logger;
  /** This process's requests for the run, added to its report by `flushTraffic`. */
  traffic: Traffic;
  /** BullMQ's, of a worker that is stopping: cancels a read. */
  signal: AbortSignal | undefined;
}
