/**
 * `rowbridge check [JOB] [--json]`: reaches the platform, authenticates, reads the app
 * and its worksheets; for a job also its worksheet, its mapping against the structure,
 * one page of rows and the time zone in use, and its source or sink: the database and
 * the table with the columns the job names, or the file and its columns. Needs no Redis
 * and writes nothing. Exit 0 when every step
 * passed, 1 when one failed, 64 on misuse.
 */
import path from 'node:path';
import { loadSettings } from '../../config/settings.ts';
import type { Settings } from '../../config/settings.ts';
import { createRedisConnection } from '../queue/redis-connection.ts';
import { statePrefixOf } from './create-runtime.ts';
import { refusedEnvRefs } from '../sync/check/job-environment.ts';
import { createStructureSnapshots } from '../sync/prepare/schema-drift.ts';
import type { StructureSnapshot } from '../sync/prepare/schema-drift.ts';
import type { Credentials } from '../api/auth.ts';
import type { PlatformClient } from '../api/create-platform-client.ts';
import { checkJob, checkPlatform, settingsFailure } from '../sync/check/check-setup.ts';
import type { CheckStep, ConnectionFacts } from '../sync/check/check-setup.ts';
import { checkSourceAndSink } from '../sync/check/check-source-sink.ts';
import { checkWriteRights } from '../sync/check/check-write-rights.ts';
import { checkTableClock } from '../sync/check/check-table-clock.ts';
import { checkOriginRights } from '../sync/check/check-origin-rights.ts';
import { twoWayWorksheetSteps } from './check-two-way-worksheet.ts';
import { doctorClient } from './doctor-client.ts';
import { loadJobSpec } from '../sync/job-spec/load-job-spec.ts';
import type { JobSpec } from '../sync/job-spec/job-spec-schema.ts';
import { defineCommand, parseCommand } from './command.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { jobFileIn } from './job-file.ts';
import { resolveJobArg } from './open-runtime.ts';

const CHECK = defineCommand({
  name: 'check',
  usage: ['check [JOB] [--json]'],
  description:
    'Reaches ROWBRIDGE_API_URL, authenticates, reads the app and lists its worksheets.\n' +
    "With JOB also reads the job's worksheet, checks the mapping against its structure,\n" +
    'reads one page of rows and shows the time zone in use; connects to its source or sink\n' +
    '(database, table and columns; file and its columns) without writing. Needs no Redis.\n' +
    'Exit 0 all good, 1 a problem, 64 misuse.',
  options: { json: { type: 'boolean', help: 'print {"ok": boolean, "steps": [{name, ok, detail}]}' } },
  positionals: { max: 1, label: 'job' },
});

function methodOf(credentials: Credentials, prefix: string): { method: string; headers: string } {
  switch (credentials.kind) {
    case 'appkey':
      return { method: 'app key + sign', headers: `${prefix}Appkey, ${prefix}Sign` };
    case 'token':
      return { method: 'personal token', headers: `Authorization: Bearer, ${prefix}Appid` };
    case 'oauth':
      return { method: 'OAuth', headers: `Authorization: Bearer, ${prefix}Appid` };
  }
}

function table(steps: readonly CheckStep[]): string {
  const width = Math.max(...steps.map((s) => s.name.length), 5);
  const lines = [`${'check'.padEnd(width)}  result  detail`];
  for (const s of steps) lines.push(`${s.name.padEnd(width)}  ${s.ok ? 'ok    ' : 'FAILED'}  ${s.detail}`);
  return lines.join('\n');
}

async function runChecks(io: CliIo, jobArg: string | undefined): Promise<CheckStep[]> {
  let spec: JobSpec | undefined;
  let file: string | undefined;
  let client: PlatformClient;
  let facts: ConnectionFacts;
  try {
    const settings = loadSettings(io.env);
    if (jobArg !== undefined) {
      const job = resolveJobArg(jobArg, io);
      const dir = job.jobsDir ?? settings.jobsDir ?? 'jobs';
      file = jobFileIn(path.resolve(io.cwd, dir), job.name);
      spec = await loadJobSpec(file);
    }
    // The target's app; a pull job's (no target) is its source worksheet's.
    const prefix =
      (spec?.target === undefined
        ? spec?.source.type === 'worksheet'
          ? spec.source.credentialsEnvPrefix
          : undefined
        : spec.target.app?.credentialsEnvPrefix) ?? 'ROWBRIDGE_';
    const opened = doctorClient(io.env, prefix);
    client = opened.client;
    facts = {
      apiUrl: opened.baseUrl,
      ...methodOf(opened.credentials, settings.headerPrefix),
      headerPrefix: settings.headerPrefix,
      timeZone: opened.timeZone,
    };
  } catch (err) {
    return [settingsFailure(err)];
  }
  try {
    const platform = await checkPlatform(client, facts);
    if (platform.steps.some((s) => !s.ok) || spec === undefined) return platform.steps;
    const settings = loadSettings(io.env);
    const job = spec.name;
    return [
      ...platform.steps,
      ...(await checkJob(spec, client, facts, platform.worksheets, file, () =>
        lastGoodStructure(settings, job),
      )),
    ];
  } finally {
    await client.close().catch(() => undefined);
    await client.limiter.stop().catch(() => undefined);
  }
}

/**
 * The structure of the job's last successful run, from the Redis of the settings; a
 * sentence saying why not when Redis does not answer within a second (check needs no Redis).
 */
async function lastGoodStructure(
  settings: Settings,
  job: string,
): Promise<StructureSnapshot | string | undefined> {
  const redis = createRedisConnection(settings.redisUrl, {
    bullmq: false,
    lazyConnect: true,
    connectTimeoutMs: 1000,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await createStructureSnapshots({ redis, prefix: statePrefixOf(settings.queuePrefix) }).get(job);
  } catch {
    return `Redis (REDIS_URL) did not answer`;
  } finally {
    redis.disconnect();
  }
}

/**
 * The job's `${NAME}` references a run would refuse (ROWBRIDGE_SOURCE_ENV_ALLOW): a step
 * of their own, so a reachable platform does not make `check` say ok over them.
 */
async function envRefSteps(io: CliIo, jobArg: string | undefined): Promise<CheckStep[]> {
  if (jobArg === undefined) return [];
  let spec: JobSpec;
  try {
    const job = resolveJobArg(jobArg, io);
    const dir = job.jobsDir ?? loadSettings(io.env).jobsDir ?? 'jobs';
    spec = await loadJobSpec(jobFileIn(path.resolve(io.cwd, dir), job.name));
  } catch {
    // runChecks reports a job that does not load.
    return [];
  }
  const refused = refusedEnvRefs(spec, io.env);
  if (refused.length === 0) return [];
  return [{ name: 'source env', ok: false, detail: refused.map((p) => `${p.path} ${p.message}`).join('; ') }];
}

/**
 * The job's source (a push) or sink (a pull), reached as a run reaches it: a database
 * over the source's read-only, privilege-checked connection, a file opened and read.
 */
async function endSteps(io: CliIo, jobArg: string | undefined): Promise<CheckStep[]> {
  if (jobArg === undefined) return [];
  let spec: JobSpec;
  let file: string;
  try {
    const job = resolveJobArg(jobArg, io);
    const dir = job.jobsDir ?? loadSettings(io.env).jobsDir ?? 'jobs';
    file = jobFileIn(path.resolve(io.cwd, dir), job.name);
    spec = await loadJobSpec(file);
  } catch {
    // runChecks reports a job that does not load.
    return [];
  }
  return [
    ...(await checkSourceAndSink(spec, { env: io.env, baseDir: path.dirname(file) })),
    ...(await checkWriteRights(spec, io.env)),
    ...(await checkTableClock(spec, io.env)),
    ...(await checkOriginRights(spec, io.env, path.dirname(file))),
    ...(await twoWayWorksheetSteps(io, spec, file)),
  ];
}

export async function main(args: string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(CHECK, args, io);
  if (typeof parsed === 'number') return parsed;
  const refused = await envRefSteps(io, parsed.positionals[0]);
  const steps = [
    ...refused,
    ...(await runChecks(io, parsed.positionals[0])),
    // A source whose environment references a run refuses is not connected to either.
    ...(refused.length === 0 ? await endSteps(io, parsed.positionals[0]) : []),
  ];
  const ok = steps.every((s) => s.ok);
  io.out(parsed.values.json === true ? JSON.stringify({ ok, steps }, null, 2) : table(steps));
  return ok ? EXIT.ok : EXIT.failure;
}
