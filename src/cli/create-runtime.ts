import { AsyncLocalStorage } from 'node:async_hooks';
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { credentialsFromEnv } from '../api/credentials-from-env.ts';
import type { Settings } from '../../config/settings.ts';
import type { ClientEvent } from '../api/create-api-client.ts';
import { createPlatformClient } from '../api/create-platform-client.ts';
import type { PlatformClient } from '../api/create-platform-client.ts';
import { credentialIdentity } from '../api/auth.ts';
import { ConfigError } from '../ground/errors.ts';
import { createRateLimiter } from '../api/limiter/create-rate-limiter.ts';
import { createRedisTokenStore } from '../api/oauth-token-store.ts';
import { resolveBaseUrl } from '../api/transport.ts';
import type { Logger } from '../ground/logger.ts';
import { createRepeatGate } from '../ground/repeat-gate.ts';
import { redisAddress } from '../ground/redis-address.ts';
import { createWorksheetReader } from '../sync/pull/read-worksheet-rows.ts';
import { didYouMean } from '../sync/job-spec/did-you-mean.ts';
import { createDeadLetterStore } from '../sync/state/dead-letter-store.ts';
import { createStructureSnapshots } from '../sync/prepare/schema-drift.ts';
import { createRunSnapshots } from '../sync/state/run-snapshots.ts';
import { createRunStore } from '../sync/state/run-store.ts';
import { createLazySourceLimits } from '../sync/sources/lazy-source-limits.ts';
import { createRedisConnection } from '../queue/redis-connection.ts';
import type { Runtime, Traffic } from '../queue/runtime-types.ts';
import { createThrottleWatch } from '../queue/throttle-watch.ts';

export interface RuntimeOptions {
  settings: Settings;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Folder of the job specs. @defaultValue `<cwd>/jobs` */
  jobsDir?: string;
  /** Sees every exchange, retry and refresh of every client (metrics). */
  onClientEvent?: (event: ClientEvent) => void;
  /** Sees the final row outcomes newly recorded, by outcome, as batches write (live metrics). */
  onRowOutcomes?: (moved: Readonly<Record<string, number>>) => void;
}

/**
 * Prefix of rowbridge's own keys (runs, index, dead letters, budgets): inside the queue
 * prefix, so that a `{hash-tagged}` queue prefix keeps every key in one cluster slot.
 */
export function statePrefixOf(queuePrefix: string): string {
  return `${queuePrefix}:rb`;
}

/**
 * The composition root: builds the Redis connections, the stores, the platform clients
 * (one per credentials prefix, budgets shared through Redis) and the job loader that
 * every command and worker shares. The only place that wires them; consumers take the
 * small interfaces they declare.
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  const { settings, env, logger } = options;
  const jobsDir = path.resolve(options.jobsDir ?? path.join(process.cwd(), 'jobs'));
  // A Cluster (redis+cluster:// URLs) offers the same commands as Redis for everything
  // done with these two; the cast stands until Runtime's types say Redis | Cluster.
  const connection = createRedisConnection(settings.redisUrl, {
    bullmq: true,
    keyPrefix: settings.queuePrefix,
  }) as Redis;
  const redis = createRedisConnection(settings.redisUrl, {
    bullmq: false,
    keyPrefix: settings.queuePrefix,
  }) as Redis;
  // ioredis reports every failed reconnect: one line per ten seconds says the same.
  const redisErrors = createRepeatGate(10_000);
  for (const client of [connection, redis]) {
    client.on('error', (err: Error) => {
      if (redisErrors(err.message))
        logger.warn({ err: { message: err.message } }, `Redis ${redisAddress(settings.redisUrl)}`);
    });
  }
  const queuePrefix = settings.queuePrefix;
  const statePrefix = statePrefixOf(queuePrefix);
  const runs = createRunStore({
    redis,
    prefix: statePrefix,
    retentionSeconds: settings.runRetentionDays * 86_400,
    rowStateTtlSeconds: Math.round(settings.rowStateTtlDays * 86_400),
    ...(options.onRowOutcomes === undefined ? {} : { onRecorded: options.onRowOutcomes }),
  });
  const deadLetters = createDeadLetterStore({
    redis,
    prefix: statePrefix,
    retentionMs: settings.dlqRetentionDays * 86_400_000,
  });
  const clients = new Map<string, PlatformClient>();
  const traffic = new AsyncLocalStorage<Traffic>();
  const throttleWatch = createThrottleWatch(() => runtime);
  const runSnapshots = createRunSnapshots({
    redis,
    prefix: statePrefix,
    ttlSeconds: settings.runRetentionDays * 86_400,
  });
  const lastGood = createStructureSnapshots({ redis, prefix: statePrefix });
  const sourceLimits = createLazySourceLimits({ redis, prefix: statePrefix });
  // OAuth tokens are keyed by token URL and client id alone (no queue prefix): every
  // deployment of one credential must follow one rotating refresh-token chain.
  let tokenRedis: Redis | undefined;

  function jobFile(name: string): string {
    if (!/^[a-z0-9][a-z0-9_-]*$/.test(name))
      throw new ConfigError(`job name "${name}" is not a job file name`);
    for (const ext of ['.yaml', '.yml']) {
      const file = path.join(jobsDir, `${name}${ext}`);
      if (existsSync(file)) return file;
    }
    // A misspelt name is answered with the job it most likely meant.
    const names = (existsSync(jobsDir) ? readdirSync(jobsDir) : [])
      .filter((f) => /\.ya?ml$/.test(f))
      .map((f) => f.replace(/\.ya?ml$/, ''));
    const near = didYouMean(name, names);
    throw new ConfigError(
      `no job spec ${name}.yaml in ${jobsDir}${near === undefined ? '' : ` (did you mean ${near}?)`}`,
    );
  }

  function clientFor(prefix = 'ROWBRIDGE_'): PlatformClient {
    const cached = clients.get(prefix);
    if (cached !== undefined) return cached;
    const { credentials, apiUrl } = credentialsFromEnv(env, prefix);
    const baseUrl = resolveBaseUrl({
      baseUrl: apiUrl ?? (prefix === 'ROWBRIDGE_' ? settings.apiUrl : undefined) ?? '',
    });
    // The budget key comes from the credential's identity, so every process using the
    // same credential shares one budget in Redis.
    const identity = credentialIdentity(credentials);
    const limiter = createRateLimiter({
      budgetKey: `${statePrefix}:budget:${identity}`,
      redis,
      initialRatePerSec: Math.min(settings.initialRate, settings.maxRate),
      maxRatePerSec: settings.maxRate,
      maxConcurrent: settings.maxConcurrent,
    });
    const client = createPlatformClient({
      baseUrl,
      credentials,
      ...(credentials.kind === 'oauth'
        ? {
            tokenStore: createRedisTokenStore({
              redis: (tokenRedis ??= createRedisConnection(settings.redisUrl, { bullmq: false }) as Redis),
              tokenUrl: credentials.tokenUrl,
              clientId: credentials.clientId,
              clientSecret: credentials.clientSecret,
            }),
          }
        : {}),
      headerPrefix: settings.headerPrefix,
      // A second application (another prefix) may live in another organisation.
      organisation: {
        timeZone: env[`${prefix}PLATFORM_TIMEZONE`]?.trim() || settings.platformTimezone,
        orgId: env[`${prefix}ORG_ID`]?.trim() || (prefix === 'ROWBRIDGE_' ? settings.orgId : undefined),
      },
      limiter,
      retry: { retries: settings.retries },
      logger,
      onEvent(event) {
        options.onClientEvent?.(event);
        const t = traffic.getStore();
        if (t === undefined) return;
        if (event.type === 'request') {
          t.requests += 1;
          if (event.category === 'throttled') t.throttled += 1;
          if (t.run !== undefined) throttleWatch.answer(t.run, event.category === 'throttled');
        } else if (event.type === 'retry') t.retries += 1;
      },
    });
    clients.set(prefix, client);
    return client;
  }

  const runtime: Runtime = {
    settings,
    env,
    logger,
    connection,
    redis,
    queuePrefix,
    statePrefix,
    runs,
    deadLetters,
    jobsDir,
    // The job-spec loader (zod, yaml) and the run preparation (mapping) are imported when
    // first used: a worker waiting for work holds neither.
    async loadJob(name) {
      const file = jobFile(name);
      const { loadJobSpec } = await import('../sync/job-spec/load-job-spec.ts');
      return { spec: await loadJobSpec(file), file };
    },
    runSnapshots,
    prepareRun: async (job, runId) =>
      (await import('../sync/prepare/prepare-run.ts')).prepareRun(
        {
          async readJob(name) {
            const file = jobFile(name);
            return { file, text: await readFile(file, 'utf8') };
          },
          // Through the runtime, so that a caller wrapping clientFor is seen here too.
          clientFor: (prefix) => runtime.clientFor(prefix),
          snapshots: runSnapshots,
          lastGood,
        },
        job,
        runId,
      ),
    clientFor,
    // Through the runtime, so that a caller wrapping clientFor is seen here too.
    readWorksheetRows: createWorksheetReader((prefix) => runtime.clientFor(prefix)),
    syncDeps: (client, log) => ({ client, redis, prefix: statePrefix, runs, deadLetters, log }),
    clients: () => clients,
    sourceLimits,
    withTraffic: (t, fn) => traffic.run(t, fn),
    async close() {
      await throttleWatch.settled();
      for (const client of [...clients.values()].reverse()) await client.close().catch(() => undefined);
      for (const client of [...clients.values()]) await client.limiter.stop().catch(() => undefined);
      clients.clear();
      await sourceLimits.close();
      // QUIT waits for Redis; a connection that is down is just dropped.
      for (const client of [redis, connection]) {
        if (client.status === 'ready') await client.quit().catch(() => undefined);
        else client.disconnect();
      }
      await tokenRedis?.quit().catch(() => undefined);
    },
  };
  return runtime;
}
