/**
 * `check JOB` for a two-way job whose table writes carry a replication origin
 * (`source.origin`, docs/cdc.md): whether the writing login may set it up on its session
 * (EXECUTE on the origin functions, revoked from PUBLIC since PostgreSQL 14) and, when the
 * origin does not exist yet, create it. Asked of the server; nothing is changed.
 */
import pg from 'pg';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import { requireEnvUrl } from '../sources/env-refs.ts';
import { redactSecrets, urlSecrets } from '../sources/redact.ts';
import { missingOriginRights, originExists, originGrant } from '../sources/replication-origin.ts';
import { capturingJobs } from './captured-by.ts';
import type { CapturingJob } from './captured-by.ts';
import type { CheckStep } from './check-setup.ts';

/**
 * The `replication origin` step: whether a postgres-cdc job of `jobsDir` capturing the
 * table would write this job's writes back (no origin, or another one), then the writing
 * login's rights. None for a job whose writes carry no origin and nothing captures.
 */
export async function checkOriginRights(
  spec: JobSpec,
  env: NodeJS.ProcessEnv,
  jobsDir?: string,
): Promise<CheckStep[]> {
  const source = spec.source;
  if (spec.target?.mode !== 'two-way' || source.type !== 'postgres') return [];
  const name = 'replication origin';
  const table = source.table ?? '';
  const captured =
    jobsDir === undefined
      ? []
      : await capturingJobs(jobsDir, spec.name, { table, urlEnv: source.urlEnv }, env);
  const echoes = captured.filter((job) => job.origin === undefined || job.origin !== source.origin);
  if (echoes.length > 0)
    return [{ name, ok: false, detail: echoes.map((job) => echoOf(job, table)).join('; ') }];
  if (source.origin === undefined) return [];
  const origin = source.origin;
  const droppedBy = captured.length === 0 ? '' : `, dropped by ${captured.map((j) => j.name).join(', ')}`;
  const urlEnv = source.writeUrlEnv ?? source.urlEnv;
  let url: string;
  try {
    url = requireEnvUrl(env, urlEnv, 'two-way table (writes)');
  } catch (err) {
    return [{ name, ok: false, detail: (err as Error).message }];
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const exists = await originExists(client, origin);
    const missing = await missingOriginRights(client, origin);
    const { rows } = await client.query<{ role: string }>('SELECT session_user AS role');
    const role = rows[0]?.role ?? 'LOGIN';
    if (missing.length === 0)
      return [
        {
          name,
          ok: true,
          detail: `writes to ${table} are marked with origin ${origin}${exists ? '' : ' (created on the first write)'} (${urlEnv})${droppedBy}`,
        },
      ];
    const absent = exists ? '' : ` origin ${origin} does not exist yet;`;
    return [
      {
        name,
        ok: false,
        detail: `the login of ${urlEnv} cannot mark its writes with origin ${origin}:${absent} as a superuser, ${originGrant(missing, role)}${absent === '' ? '' : ` (or create it: rowbridge cdc setup on the postgres-cdc job)`}`,
      },
    ];
  } catch (err) {
    return [
      {
        name,
        ok: false,
        detail: `postgres (${urlEnv}): ${redactSecrets((err as Error).message, urlSecrets(url))}`,
      },
    ];
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Why `job`'s stream would write this job's table writes back to the worksheet. */
function echoOf(job: CapturingJob, table: string): string {
  const fix =
    job.origin === undefined
      ? `give both jobs the same origin (e.g. origin: rowbridge)`
      : `set source.origin: ${job.origin} on this job`;
  return `postgres-cdc job ${job.name} captures ${table}${job.origin === undefined ? ' with no origin' : ` and drops origin ${job.origin} only`}: it would write this job's writes back to the worksheet; ${fix} (docs/cdc.md)`;
}
