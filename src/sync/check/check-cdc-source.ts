/**
 * `rowbridge check JOB` for a postgres-cdc job: the same questions `rowbridge cdc check`
 * asks (cdc-admin.ts, `cdcProblems`), each missing thing a failed step of its own saying
 * what to do: wal_level, the role's REPLICATION, a privileged login, the primary key or
 * replica identity, the slot (missing or invalidated) and the publication.
 */
import pg from 'pg';
import { cdcProblems, problemForJob, slotState } from '../cdc/cdc-admin.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import { requireEnvUrl } from '../sources/env-refs.ts';
import { redactSecrets, urlSecrets } from '../sources/redact.ts';
import type { CheckStep } from './check-setup.ts';

/** The steps of a postgres-cdc source; none for another source. */
export async function checkCdcSource(spec: JobSpec, env: NodeJS.ProcessEnv): Promise<CheckStep[]> {
  const source = spec.source;
  if (source.type !== 'postgres-cdc') return [];
  const who = `postgres-cdc (${source.urlEnv})`;
  let url: string;
  try {
    url = requireEnvUrl(env, source.urlEnv, 'postgres-cdc source');
  } catch (err) {
    return [{ name: 'source', ok: false, detail: (err as Error).message }];
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const problems = await cdcProblems(client, source, { setupDone: false });
    const slot = problems.length === 0 ? await slotState(client, source.slot) : undefined;
    return [
      { name: 'source', ok: true, detail: `${who} reached; table ${source.table}` },
      ...(problems.length === 0
        ? [
            {
              name: 'change capture',
              ok: true,
              detail: `ready: wal_level logical, REPLICATION, slot ${source.slot} (confirmed ${slot?.confirmedLsn ?? '-'}, ${slot?.lagBytes ?? 0} bytes behind), publication ${source.publication}`,
            },
          ]
        : problems.map((p) => ({
            name: 'change capture',
            ok: false,
            detail: problemForJob(p, spec.name),
          }))),
    ];
  } catch (err) {
    return [
      {
        name: 'source',
        ok: false,
        detail: `${who}: ${redactSecrets((err as Error).message, urlSecrets(url))}`,
      },
    ];
  } finally {
    await client.end().catch(() => undefined);
  }
}
