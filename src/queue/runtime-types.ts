/**
 * The runtime's shape, apart from createRuntime (src/cli/create-runtime.ts) so that what the runtime
 * builds, such as the throttle watch, can take the runtime without importing its maker.
 */
import type { Redis } from 'ioredis';
import type { Settings } from '../../config/settings.ts';
import type { PlatformClient } from '../api/create-platform-client.ts';
import type { Logger } from '../ground/logger.ts';
import type { SyncDeps } from '../sync/write/create-sync-context.ts';
import type { JobSpec } from '../sync/job-spec/job-spec-schema.ts';
import type { PreparedRun } from '../sync/prepare/prepare-run.ts';
import type { ReadWorksheetRows } from '../sync/sources/source-deps.ts';
import type { SourceLimits } from '../sync/sources/source-rate-limit.ts';
import type { DeadLetterStore } from '../sync/state/dead-letter-store.ts';
import type { RunSnapshots } from '../sync/state/run-snapshots.ts';
import type { RunStore } from '../sync/state/run-store.ts';

/** The run a platform answer was for. */
export interface ThrottledRunRef {
  job: string;
  runId: string;
}

/** Requests, throttled answers and retries made on behalf of one run in this process. */
export interface Traffic {
  requests: number;
  throttled: number;
  retries: number;
  /** The run it is made for: its answers feed the `throttled` event (throttle-watch.ts). */
  run?: ThrottledRunRef;
}

/** Finds `jobs/NAME.yaml` (or `.yml`) and loads it, validated. */
export type LoadJob = (name: string) => Promise<{ spec: JobSpec; file: string }>;

/**
 * The run's spec, client and plan, prepared once per run (src/sync/prepare/prepare-run.ts):
 * with a run id, from the run's snapshot when it has one.
 */
export type PrepareRun = (job: string, runId?: string) => Promise<PreparedRun>;

/** The client of the job's target application (or of a credentials prefix). */
export type ClientFor = (credentialsEnvPrefix?: string) => PlatformClient;

/** What the sync engine needs for a job writing through `client`. */
export type SyncDepsFor = (client: PlatformClient, log: Logger) => SyncDeps;

/** Attributes client traffic to a run while `fn` runs. */
export type WithTraffic = <T>(traffic: Traffic, fn: () => Promise<T>) => Promise<T>;

/**
 * Everything a worker or a CLI command shares: Redis connections, the stores, one
 * platform client per credential (each with its budget shared through Redis), and the
 * job-spec loader. Built once per process by the CLI; released by `close()` in reverse.
 */
export interface Runtime {
  settings: Settings;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** BullMQ connection (blocking commands: maxRetriesPerRequest null). */
  connection: Redis;
  /** State connection. */
  redis: Redis;
  /** BullMQ key prefix. */
  queuePrefix: string;
  /** Prefix of rowbridge's own keys, inside the queue prefix's hash slot. */
  statePrefix: string;
  runs: RunStore;
  deadLetters: DeadLetterStore;
  jobsDir: string;
  /** Finds `jobs/NAME.yaml` (or `.yml`) and loads it, validated. */
  loadJob(name: string): Promise<{ spec: JobSpec; file: string }>;
  /** What each run started with (spec text, structure). */
  runSnapshots: RunSnapshots;
  /**
   * The run's spec, client and plan, prepared once per run (src/sync/prepare/prepare-run.ts):
   * with a run id, from the run's snapshot when it has one.
   */
  prepareRun(job: string, runId?: string): Promise<PreparedRun>;
  /** The client of the job's target application (or of a credentials prefix). */
  clientFor(credentialsEnvPrefix?: string): PlatformClient;
  /** What the sync engine needs for a job writing through `client`. */
  syncDeps(client: PlatformClient, log: Logger): SyncDeps;
  /** Reads a worksheet source's rows through the client of its credentials prefix. */
  readWorksheetRows: ReadWorksheetRows;
  /** The clients made so far, by credentials prefix (metrics read their pace). */
  clients(): ReadonlyMap<string, PlatformClient>;
  /** The `source.rateLimit` of each job, shared through Redis with every worker. */
  sourceLimits: SourceLimits;
  /** Attributes client traffic to a run while `fn` runs. */
  withTraffic<T>(traffic: Traffic, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
