/**
 * The table side of a two-way job (PostgreSQL; MySQL/MariaDB in mysql-table-side.ts). Reads go through their own connection in
 * READ ONLY transactions, keyset-paged on the key column; writes go through a second
 * connection (`writeUrlEnv`, else `urlEnv`), one transaction per batch, so a batch is
 * either all in the table or not at all. The caller saves the new base hashes only after
 * a batch committed.
 */
import pg from 'pg';
import { readSetting } from '../../../config/settings.ts';
import { requireEnvUrl } from '../sources/env-refs.ts';
import { postgresPrivileges } from '../sources/postgres-privileges.ts';
import { privilegedSourceError } from '../sources/privileged-source-error.ts';
import { redactSecrets, urlSecrets } from '../sources/redact.ts';
import { SourceError } from '../sources/source-error.ts';
import type { MysqlSourceSpec, PostgresSourceSpec } from '../sources/source-spec.ts';
import { pgWallClockTypes } from '../sources/sql-wall-clock-types.ts';
import { openMysqlTableSide } from './mysql-table-side.ts';
import type { ColumnInfo, TableRecord, TableSide } from './table-side-types.ts';

const quote = (name: string) =>
  name
    .split('.')
    .map((part) => `"${part.replaceAll('"', '""')}"`)
    .join('.');

const PAGE = 5000;

/** Opens both connections and reads the table's columns; refuses a privileged login. */
export function openTableSide(
  spec: PostgresSourceSpec | MysqlSourceSpec,
  env: NodeJS.ProcessEnv,
): Promise<TableSide> {
  return spec.type === 'mysql' ? openMysqlTableSide(spec, env) : openPostgresTableSide(spec, env);
}

async function openPostgresTableSide(spec: PostgresSourceSpec, env: NodeJS.ProcessEnv): Promise<TableSide> {
  const table = spec.table!;
  const keyColumn = spec.keyColumn!;
  const readUrl = requireEnvUrl(env, spec.urlEnv, 'two-way table');
  const writeUrl =
    spec.writeUrlEnv === undefined ? readUrl : requireEnvUrl(env, spec.writeUrlEnv, 'two-way table (writes)');
  const secrets = [...urlSecrets(readUrl), ...urlSecrets(writeUrl)];
  const who = `postgres table ${table} (${spec.urlEnv})`;
  const timeoutMs = readSetting('sourceStatementTimeoutMs', env) ?? 60_000;
  const fail = (err: unknown, what: string) =>
    new SourceError(
      'SOURCE_UNAVAILABLE',
      `${who}: ${what}: ${redactSecrets((err as Error).message, secrets)}`,
      {
        cause: err,
      },
    );
  const reader = new pg.Client({
    connectionString: readUrl,
    types: pgWallClockTypes,
    connectionTimeoutMillis: 10_000,
  });
  const writer = new pg.Client({
    connectionString: writeUrl,
    types: pgWallClockTypes,
    connectionTimeoutMillis: 10_000,
  });
  reader.on('error', () => undefined);
  writer.on('error', () => undefined);
  const close = async () => {
    await reader.end().catch(() => undefined);
    await writer.end().catch(() => undefined);
  };
  try {
    await reader.connect();
    await writer.connect();
  } catch (err) {
    await close();
    throw fail(err, 'cannot connect');
  }
  if (spec.allowPrivilegedSource !== true) {
    const reasons = [...(await postgresPrivileges(reader)), ...(await postgresPrivileges(writer))];
    if (reasons.length > 0) {
      await close();
      throw privilegedSourceError(who, [...new Set(reasons)]);
    }
  }
  const [schema, name] = table.includes('.') ? table.split('.') : [undefined, table];
  const { rows } = await reader.query<{ column_name: string; data_type: string; generated: boolean }>(
    `SELECT column_name, data_type,
            (is_generated = 'ALWAYS' OR identity_generation = 'ALWAYS') AS generated
       FROM information_schema.columns
      WHERE table_schema = COALESCE($1, current_schema()) AND table_name = $2`,
    [schema ?? null, name],
  );
  if (rows.length === 0) {
    await close();
    throw new SourceError('SOURCE_CONFIG', `${who}: no such table, or the login cannot see it`);
  }
  const columns = new Map<string, ColumnInfo>(
    rows.map((r) => [
      r.column_name,
      {
        zoneLess: r.data_type === 'timestamp without time zone' || r.data_type === 'date',
        generated: r.generated,
      },
    ]),
  );

  async function readOnly(sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>> {
    await reader.query('BEGIN READ ONLY');
    try {
      await reader.query("SELECT set_config('statement_timeout', $1, true)", [String(timeoutMs)]);
      const result = await reader.query<Record<string, unknown>>(sql, params);
      await reader.query('COMMIT');
      return result.rows;
    } catch (err) {
      await reader.query('ROLLBACK').catch(() => undefined);
      throw fail(err, 'read failed');
    }
  }

  return {
    columns,
    async readAll(wanted) {
      const list = [...new Set([keyColumn, ...wanted])].map(quote).join(', ');
      const out: TableRecord[] = [];
      let last: unknown;
      for (;;) {
        const page = await readOnly(
          `SELECT ${list} FROM ${quote(table)}${last === undefined ? '' : ` WHERE ${quote(keyColumn)} > $1`} ORDER BY ${quote(keyColumn)} LIMIT ${PAGE}`,
          last === undefined ? [] : [last],
        );
        for (const row of page) out.push({ key: String(row[keyColumn]), values: row });
        if (page.length < PAGE) return out;
        last = page.at(-1)![keyColumn];
      }
    },
    async write(batch) {
      const created = new Map<string, string>();
      try {
        await writer.query('BEGIN');
        await writer.query("SELECT set_config('statement_timeout', $1, true)", [String(timeoutMs)]);
        for (const u of batch.updates) {
          const cols = Object.keys(u.set);
          if (cols.length === 0) continue;
          await writer.query(
            `UPDATE ${quote(table)} SET ${cols.map((c, i) => `${quote(c)} = $${i + 1}`).join(', ')} WHERE ${quote(keyColumn)} = $${cols.length + 1}`,
            [...cols.map((c) => u.set[c]), u.key],
          );
        }
        for (const ins of batch.inserts) {
          const cols = Object.keys(ins.values);
          const { rows: back } = await writer.query<Record<string, unknown>>(
            `INSERT INTO ${quote(table)} (${cols.map(quote).join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING ${quote(keyColumn)}`,
            cols.map((c) => ins.values[c]),
          );
          created.set(ins.ref, String(back[0]![keyColumn]));
        }
        for (let i = 0; i < batch.deletes.length; i += 500) {
          const keys = batch.deletes.slice(i, i + 500);
          await writer.query(
            `DELETE FROM ${quote(table)} WHERE ${quote(keyColumn)} IN (${keys.map((_, j) => `$${j + 1}`).join(', ')})`,
            keys,
          );
        }
        await writer.query('COMMIT');
      } catch (err) {
        await writer.query('ROLLBACK').catch(() => undefined);
        throw fail(err, 'write failed (the batch was rolled back)');
      }
      return created;
    },
    close,
  };
}
