/**
 * `check JOB` for a two-way job: whether the login writes connect with (`writeUrlEnv`,
 * else `urlEnv`) holds INSERT, UPDATE and DELETE on the table, asked of the server
 * without changing any data: PostgreSQL's has_table_privilege (and USAGE on the key's
 * sequence), MySQL's SHOW GRANTS.
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { CheckStep } from './check-setup.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import { requireEnvUrl } from '../sources/env-refs.ts';
import { redactSecrets, urlSecrets } from '../sources/redact.ts';

const WRITES = ['INSERT', 'UPDATE', 'DELETE'] as const;

/** Write rights the login lacks on `table` (empty: none), and a note (the key's sequence). */
type Missing = { missing: string[]; note?: string };

async function postgresMissing(url: string, table: string, keyColumn: string): Promise<Missing> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ oid: string | null }>('SELECT to_regclass($1)::oid AS oid', [
      table,
    ]);
    const oid = rows[0]?.oid;
    if (oid === null || oid === undefined) throw new Error(`no table ${table}, or the login cannot see it`);
    const missing: string[] = [];
    for (const right of WRITES) {
      const { rows: has } = await client.query<{ ok: boolean }>(
        'SELECT has_table_privilege($1::oid, $2) AS ok',
        [oid, right],
      );
      if (has[0]?.ok !== true) missing.push(right);
    }
    const { rows: seq } = await client.query<{ seq: string | null }>(
      'SELECT pg_get_serial_sequence($1, $2) AS seq',
      [table, keyColumn],
    );
    const sequence = seq[0]?.seq;
    if (sequence !== null && sequence !== undefined) {
      const { rows: use } = await client.query<{ ok: boolean }>(
        "SELECT has_sequence_privilege($1, 'USAGE') AS ok",
        [sequence],
      );
      if (use[0]?.ok !== true) missing.push(`USAGE on sequence ${sequence}`);
    }
    return { missing };
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function mysqlMissing(url: string, table: string): Promise<Missing> {
  const conn = await mysql.createConnection({ uri: url, connectTimeout: 10_000 });
  conn.on('error', () => undefined);
  try {
    const [dbRows] = await conn.query('SELECT DATABASE() AS db');
    const [schema, name] = table.includes('.')
      ? (table.split('.') as [string, string])
      : [(dbRows as Array<{ db: string | null }>)[0]?.db ?? '', table];
    const [grantRows] = await conn.query('SHOW GRANTS');
    const held = new Set<string>();
    let roles = false;
    for (const row of grantRows as Array<Record<string, unknown>>) {
      const first = Object.values(row)[0];
      const line = typeof first === 'string' ? first : '';
      const grant = /^GRANT (.+?) ON (.+?) TO /s.exec(line);
      if (grant === null) {
        roles ||= /^GRANT .+ TO /s.test(line);
        continue;
      }
      const scope = (grant[2] ?? '').replaceAll('`', '');
      if (scope !== '*.*' && scope !== `${schema}.*` && scope !== `${schema}.${name}`) continue;
      for (const privilege of (grant[1] ?? '').replace(/\([^)]*\)/g, '').split(',')) {
        const p = privilege.trim().toUpperCase();
        if (p === 'ALL' || p === 'ALL PRIVILEGES') for (const w of WRITES) held.add(w);
        else held.add(p);
      }
    }
    return {
      missing: WRITES.filter((w) => !held.has(w)),
      ...(roles
        ? { note: 'rights held through a role are not counted; the role must be the default one' }
        : {}),
    };
  } finally {
    await conn.end().catch(() => undefined);
  }
}

/** The `table write rights` step of `check JOB`; none for a job that is not two-way. */
export async function checkWriteRights(spec: JobSpec, env: NodeJS.ProcessEnv): Promise<CheckStep[]> {
  const source = spec.source;
  if (spec.target?.mode !== 'two-way' || (source.type !== 'postgres' && source.type !== 'mysql')) return [];
  const name = 'table write rights';
  const urlEnv = source.writeUrlEnv ?? source.urlEnv;
  const table = source.table ?? '';
  let url: string;
  try {
    url = requireEnvUrl(env, urlEnv, 'two-way table (writes)');
  } catch (err) {
    return [{ name, ok: false, detail: (err as Error).message }];
  }
  try {
    const { missing, note } =
      source.type === 'postgres'
        ? await postgresMissing(url, table, source.keyColumn ?? '')
        : await mysqlMissing(url, table);
    const suffix = note === undefined ? '' : ` (${note})`;
    if (missing.length === 0)
      return [{ name, ok: true, detail: `INSERT, UPDATE, DELETE on ${table} (${urlEnv})${suffix}` }];
    return [
      {
        name,
        ok: false,
        detail: `the login of ${urlEnv} lacks ${missing.join(', ')} on ${table}: a two-way run writes the table (docs/two-way.md lists the GRANT)${suffix}`,
      },
    ];
  } catch (err) {
    return [
      {
        name,
        ok: false,
        detail: `${source.type} (${urlEnv}): ${redactSecrets((err as Error).message, urlSecrets(url))}`,
      },
    ];
  }
}
