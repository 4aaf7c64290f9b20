/**
 * `check JOB` for a two-way job whose table has an `updatedAtColumn`: whether the login
 * the reads connect with sees the other logins' transactions in progress. A run caps the
 * table's cursor at the start of the oldest transaction that has written, when earlier
 * than the database's clock (sql-table-scans.ts): a transaction stamps its rows with its
 * start (PostgreSQL `now()`) and may commit after the run's reads. PostgreSQL shows other
 * roles' transactions to a superuser or a member of `pg_read_all_stats` only, MySQL shows
 * `information_schema.INNODB_TRX` with PROCESS only. Unseen, such a transaction is covered
 * by `ROWBRIDGE_CURSOR_MARGIN_SECONDS` alone: a warning (the step still passes), not a
 * failure, since many deployments have no long writing transactions.
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { CheckStep } from './check-setup.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import { requireEnvUrl } from '../sources/env-refs.ts';
import { redactSecrets, urlSecrets } from '../sources/redact.ts';

const NAME = 'table transactions';

async function postgresSeesAll(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ sees: boolean }>(
      `SELECT r.rolsuper OR pg_has_role(current_user, 'pg_read_all_stats', 'MEMBER') AS sees
         FROM pg_roles r WHERE r.rolname = current_user`,
    );
    return rows[0]?.sees === true;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function mysqlSeesAll(url: string): Promise<boolean> {
  const conn = await mysql.createConnection({ uri: url, connectTimeout: 10_000 });
  conn.on('error', () => undefined);
  try {
    await conn.query('SELECT COUNT(*) FROM information_schema.INNODB_TRX');
    return true;
  } catch {
    return false;
  } finally {
    await conn.end().catch(() => undefined);
  }
}

/** The `table transactions` step of `check JOB`; none unless two-way on a table with `updatedAtColumn`. */
export async function checkTableClock(spec: JobSpec, env: NodeJS.ProcessEnv): Promise<CheckStep[]> {
  const source = spec.source;
  if (spec.target?.mode !== 'two-way' || (source.type !== 'postgres' && source.type !== 'mysql')) return [];
  if (source.updatedAtColumn === undefined) return [];
  let url: string;
  try {
    url = requireEnvUrl(env, source.urlEnv, 'two-way table');
  } catch (err) {
    return [{ name: NAME, ok: false, detail: (err as Error).message }];
  }
  try {
    const sees = source.type === 'postgres' ? await postgresSeesAll(url) : await mysqlSeesAll(url);
    if (sees)
      return [
        {
          name: NAME,
          ok: true,
          detail: `the login of ${source.urlEnv} sees every writing transaction: one open across a run is read by the next`,
        },
      ];
    const grant =
      source.type === 'postgres'
        ? 'GRANT pg_read_all_stats TO the login'
        : 'PROCESS, which needs allowPrivilegedSource';
    return [
      {
        name: NAME,
        ok: true,
        detail: `warning: the login of ${source.urlEnv} does not see other logins' transactions (${grant}): a transaction that updates a record before a run's reads and commits after them is read by the next run only if it began less than ROWBRIDGE_CURSOR_MARGIN_SECONDS before those reads`,
      },
    ];
  } catch (err) {
    return [
      {
        name: NAME,
        ok: false,
        detail: `${source.type} (${source.urlEnv}): ${redactSecrets((err as Error).message, urlSecrets(url))}`,
      },
    ];
  }
}
