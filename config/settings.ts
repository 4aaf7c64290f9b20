/**
 * rowbridge's runtime settings: one schema, and the only place that reads
 * `process.env` (graphile-worker's config.ts). Every setting names its environment
 * variable, its default and whether it is secret; secrets are never logged, never put
 * in job data and never echoed in error messages.
 */
import { PLATFORM_SETTINGS } from './platform-settings.ts';
import {
  text,
  positiveNumber,
  positiveInt,
  logLevel,
  memoryMode,
  flag,
  dashboardToken,
  hookSecret,
} from './setting-parsers.ts';
import type { Setting } from './setting-parsers.ts';

/** The schema: setting key → its variable, default and secrecy. */
export const SETTINGS = {
  ...PLATFORM_SETTINGS,
  redisUrl: {
    env: 'REDIS_URL',
    description: 'Redis for queues, budgets and state; redis+cluster://h1:p1,h2:p2 for a Redis Cluster',
    default: 'redis://127.0.0.1:6379',
    secret: true,
    parse: text,
  },
  queuePrefix: {
    env: 'ROWBRIDGE_QUEUE_PREFIX',
    description: 'BullMQ key prefix (use {hash-tags} on Redis Cluster)',
    default: 'rowbridge',
    parse: text,
  },
  initialRate: {
    env: 'ROWBRIDGE_RATE',
    description: 'starting requests/s per credential, all workers together',
    default: 10,
    parse: positiveNumber,
  },
  maxRate: {
    env: 'ROWBRIDGE_MAX_RATE',
    description: 'ceiling requests/s per credential',
    default: 50,
    parse: positiveNumber,
  },
  maxConcurrent: {
    env: 'ROWBRIDGE_MAX_CONCURRENT',
    description: 'in-flight requests per process',
    default: 8,
    parse: positiveInt,
  },
  retries: {
    env: 'ROWBRIDGE_RETRIES',
    description:
      'client retries of a transient failure (throttling is paced, not counted) before the batch job is retried',
    default: 6,
    parse: positiveInt,
  },
  batchAttempts: {
    env: 'ROWBRIDGE_BATCH_ATTEMPTS',
    description: 'attempts of a batch job before its rows are dead-lettered',
    default: 5,
    parse: positiveInt,
  },
  batchBackoffMs: {
    env: 'ROWBRIDGE_BATCH_BACKOFF_MS',
    description: 'first delay of the exponential backoff between batch attempts',
    default: 1000,
    parse: positiveInt,
  },
  jobsDir: {
    env: 'ROWBRIDGE_JOBS_DIR',
    description: 'folder of the job specs (default ./jobs)',
    parse: text,
  },
  lockDurationMs: {
    env: 'ROWBRIDGE_LOCK_DURATION_MS',
    description: "how long a worker holds a job without renewing; a dead worker's jobs move on after it",
    default: 30_000,
    parse: positiveInt,
  },
  dlqRetentionDays: {
    env: 'ROWBRIDGE_DLQ_RETENTION_DAYS',
    description: 'dead letters older than this many days are removed (a slice at each new dead letter)',
    default: 90,
    parse: positiveNumber,
  },
  rowStateTtlDays: {
    env: 'ROWBRIDGE_ROW_STATE_TTL_DAYS',
    description:
      'row outcomes of a failed or abandoned run are kept this many days, so the next run of the job resumes it',
    default: 7,
    parse: positiveNumber,
  },
  runRetentionDays: {
    env: 'ROWBRIDGE_RUN_RETENTION_DAYS',
    description: 'run records and their reports are kept this many days (status, dashboard)',
    default: 14,
    parse: positiveNumber,
  },
  redisWaitMs: {
    env: 'ROWBRIDGE_REDIS_WAIT_MS',
    description:
      '`run` and `worker` wait this long for Redis to come back before exiting 1 (the run stays resumable)',
    default: 120_000,
    parse: positiveInt,
  },
  maxCellBytes: {
    env: 'ROWBRIDGE_MAX_CELL_BYTES',
    description: 'a source record with a cell larger than this many bytes is dead-lettered with the reason',
    default: 1_048_576,
    parse: positiveInt,
  },
  shutdownTimeoutMs: {
    env: 'ROWBRIDGE_SHUTDOWN_TIMEOUT_MS',
    description: 'on Ctrl-C or SIGTERM, the longest wait for jobs in flight before the process exits anyway',
    default: 30_000,
    parse: positiveInt,
  },
  memory: {
    env: 'ROWBRIDGE_MEMORY',
    description:
      "how V8's heap is sized: lean bounds it (a 1M-row import peaks near 185 MB), fast lets V8 size it (about twice that, a tenth less CPU); see docs/deployment.md",
    default: 'lean' as const,
    parse: memoryMode,
  },
  logLevel: { env: 'ROWBRIDGE_LOG_LEVEL', description: 'pino log level', default: 'info', parse: logLevel },
  dashboardToken: {
    env: 'ROWBRIDGE_DASHBOARD_TOKEN',
    description:
      'bearer token of the dashboard (also accepted as the password of HTTP basic auth); at least 16 characters',
    secret: true,
    parse: dashboardToken,
  },
  dashboardUsers: {
    env: 'ROWBRIDGE_DASHBOARD_USERS',
    description:
      'dashboard users for HTTP basic auth: name:scrypt$salt$hash, comma-separated (rowbridge dashboard --hash-password)',
    secret: true,
    parse: text,
  },
  dashboardHosts: {
    env: 'ROWBRIDGE_DASHBOARD_HOSTS',
    description:
      'host names the dashboard answers besides localhost, 127.0.0.1, [::1] and its bound address (comma-separated; the name a reverse proxy forwards)',
    parse: text,
  },
  opsHosts: {
    env: 'ROWBRIDGE_OPS_HOSTS',
    description:
      "host names or addresses /healthz, /readyz and /metrics answer besides the dashboard hosts and, bound to 0.0.0.0, this machine's addresses (comma-separated; e.g. the service name a scraper calls)",
    parse: text,
  },
  sourceEnvAllow: {
    env: 'ROWBRIDGE_SOURCE_ENV_ALLOW',
    description:
      'names or globs (comma-separated) that ${ENV} in job specs may resolve; unset, none does. Names that look like credentials (*KEY*, *PASS*, *TOKEN*, *_URL, PG*, ...) resolve only when listed by name',
    parse: text,
  },
  dataDir: {
    env: 'ROWBRIDGE_DATA_DIR',
    description:
      'folder file sources and sinks are confined to: relative paths resolve under it, paths and symlinks out of it are refused',
    parse: text,
  },
  sourceStatementTimeoutMs: {
    env: 'ROWBRIDGE_SOURCE_STATEMENT_TIMEOUT_MS',
    description: 'longest a postgres/mysql source query may run (each runs in a READ ONLY transaction)',
    default: 60_000,
    parse: positiveInt,
  },
  cursorMarginSeconds: {
    env: 'ROWBRIDGE_CURSOR_MARGIN_SECONDS',
    description:
      "a change cursor (two-way, a worksheet source read by key) is saved this far behind its reads' start, on the clock that stamps the changes (the platform's Date, the database's); the next run reads the changes of that margin again",
    default: 5,
    parse: positiveNumber,
  },
  sourceDenyPrivate: {
    env: 'ROWBRIDGE_SOURCE_DENY_PRIVATE',
    description:
      'http sources refuse loopback, private and link-local addresses (checked on the resolved address they connect to); unset, an http source can reach internal networks',
    default: false,
    parse: flag,
  },
  hookToken: {
    env: 'ROWBRIDGE_HOOK_TOKEN',
    description:
      'token a webhook call sends as Authorization: Bearer <token> or X-Rowbridge-Token (POST /hooks/JOB); at least 16 characters',
    secret: true,
    parse: dashboardToken,
  },
  hookSecret: {
    env: 'ROWBRIDGE_HOOK_SECRET',
    description:
      'Standard Webhooks signing secret (whsec_...) a webhook call is verified with (webhook-id, webhook-timestamp, webhook-signature)',
    secret: true,
    parse: hookSecret,
  },
  notify: {
    env: 'ROWBRIDGE_NOTIFY',
    description:
      'notification channels of every job, as a YAML or JSON list ([{type: webhook, url: "${ALERTS_URL}", on: [failed]}]); see docs/notifications.md',
    parse: text,
  },
  notifySecret: {
    env: 'ROWBRIDGE_NOTIFY_SECRET',
    description: 'Standard Webhooks secret (whsec_...) that signs generic webhook notifications',
    secret: true,
    parse: text,
  },
  notifyCooldownMs: {
    env: 'ROWBRIDGE_NOTIFY_COOLDOWN_MS',
    description: 'one notification per event per job within this long; the next says how many were held back',
    default: 900_000,
    parse: positiveInt,
  },
  notifyThrottledMs: {
    env: 'ROWBRIDGE_NOTIFY_THROTTLED_MS',
    description:
      'a run the platform has answered only "throttled" (51/90000) for longer than this raises the throttled event, once',
    default: 600_000,
    parse: positiveInt,
  },
  staleCheckMs: {
    env: 'ROWBRIDGE_STALE_CHECK_MS',
    description:
      'how often workers check each job with expect.freshness for a successful run that is overdue',
    default: 60_000,
    parse: positiveInt,
  },
  cdcLagWarnSeconds: {
    env: 'ROWBRIDGE_CDC_LAG_WARN_SECONDS',
    description:
      'a postgres-cdc stream whose oldest change not yet written is older than this many seconds shows a warning (status, job page, rowbridge_cdc_lag_warning on /metrics)',
    default: 60,
    parse: positiveNumber,
  },
  cdcLagWarnBytes: {
    env: 'ROWBRIDGE_CDC_LAG_WARN_BYTES',
    description:
      'a postgres-cdc stream whose slot is more than this many bytes of WAL behind the server shows a warning (the server keeps that WAL until it is confirmed)',
    default: 1_073_741_824,
    parse: positiveInt,
  },
  dashboardUrl: {
    env: 'ROWBRIDGE_DASHBOARD_URL',
    description: "the dashboard's public address: notifications link to the job's page",
    parse: text,
  },
} satisfies Record<string, Setting<unknown>>;

type Schema = typeof SETTINGS;
type ValueOf<S> = S extends Setting<infer T> ? T : never;

/** Loaded settings: keys with a default are always set. */
export type Settings = {
  [K in keyof Schema as Schema[K] extends { default: unknown } ? K : never]: ValueOf<Schema[K]>;
} & {
  [K in keyof Schema as Schema[K] extends { default: unknown } ? never : K]?: ValueOf<Schema[K]>;
};

/** Reads every setting from `env` (process.env by default) and applies the defaults. */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const out: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(SETTINGS) as Array<[string, Setting<unknown>]>) {
    const raw = env[setting.env];
    if (raw !== undefined && raw !== '') out[key] = setting.parse(raw.trim(), setting.env);
    else if (setting.default !== undefined) out[key] = setting.default;
  }
  return out as Settings;
}

/**
 * One setting read from `env`, for code that is handed an environment rather than the
 * loaded settings (sources and sinks get the runtime's env): same parse, same default.
 */
export function readSetting<K extends keyof Schema>(
  key: K,
  env: NodeJS.ProcessEnv,
): ValueOf<Schema[K]> | undefined {
  const setting = SETTINGS[key] as Setting<unknown>;
  const raw = env[setting.env];
  if (raw !== undefined && raw !== '') return setting.parse(raw.trim(), setting.env) as ValueOf<Schema[K]>;
  return setting.default as ValueOf<Schema[K]> | undefined;
}

/** Names of the variables holding secrets, for redaction and for `--help` texts. */
export function secretVariables(): string[] {
  return Object.values(SETTINGS as Record<string, Setting<unknown>>)
    .filter((s) => s.secret === true)
    .map((s) => s.env);
}
