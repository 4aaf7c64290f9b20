/**
 * The table side of a two-way job (PostgreSQL; MySQL/MariaDB in mysql-table-side.ts). Reads go through their own connection in
 * READ ONLY transactions, keyset-paged on the key column; writes go through a second
 * connection (`writeUrlEnv`, else `urlEnv`), one transaction per batch, so a batch is
 * either all in the table or not at all. The caller saves the new base hashes only after
 * a batch committed. The SQL both databases share is sql-table-side.ts's.
 */
import pg from 'pg';
import { postgresPrivileges } from '../sources/postgres-privileges.ts';
import { SourceError } from '../sources/source-error.ts';
import type { MysqlSourceSpec, PostgresSourceSpec } from '../sources/source-spec.ts';
import { pgWallClockTypes } from '../sources/sql-wall-clock-types.ts';
import { markedWithOrigin } from './origin-marked-side.ts';
import { createSqlTableSide } from './sql-table-side.ts';
import type { RunSql } from './sql-table-side.ts';
import { tableSideSettings } from './table-side-settings.ts';
import type { ColumnInfo, TableSide } from './table-side-types.ts';

const quote = (name: string) =>
  name
    .split('.')
    .map((part) => `"${part.replaceAll('"', '""')}"`)
    .join('.');

/** Opens both connections and reads the table's columns; refuses a privileged login. */
export function openTableSide(
  spec: PostgresSourceSpec | MysqlSourceSpec,
  env: NodeJS.ProcessEnv,
): Promise<TableSide> {
  // mysql2 loads only for a MySQL table: a PostgreSQL run does not pay for its ~90 modules.
  return spec.type === 'mysql'
    ? import('./mysql-table-side.ts').then((m) => m.openMysqlTableSide(spec, env))
    : openPostgresTableSide(spec, env);
}

async function openPostgresTableSide(spec: PostgresSourceSpec, env: NodeJS.ProcessEnv): Promise<TableSide> {
  const settings = tableSideSettings(spec, env);
  const { table, keyColumn, who, timeoutMs, fail } = settings;
  const reader = new pg.Client({
    connectionString: settings.readUrl,
    types: pgWallClockTypes,
    connectionTimeoutMillis: 10_000,
  });
  const writer = new pg.Client({
    connectionString: settings.writeUrl,
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
  await settings.refusePrivileged(
    async () => [...(await postgresPrivileges(reader)), ...(await postgresPrivileges(writer))],
    close,
  );
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
  const runOn =
    (client: pg.Client): RunSql =>
    async (sql, params) =>
      (await client.query<Record<string, unknown>>(sql, params)).rows;
  const write = runOn(writer);

  const side = createSqlTableSide({
    kind: 'postgres',
    table,
    keyColumn,
    columns,
    quote,
    placeholder: (n) => `$${n}`,
    read: runOn(reader),
    write,
    beginRead: 'BEGIN READ ONLY',
    beginWrite: 'BEGIN',
    limitTime: async (run) => {
      await run("SELECT set_config('statement_timeout', $1, true)", [String(timeoutMs)]);
    },
    async insert(sql, params) {
      const back = await write(`${sql} RETURNING ${quote(keyColumn)}`, params);
      return String(back[0]![keyColumn]);
    },
    fail,
    close,
  });
  return spec.origin === undefined ? side : await markedWithOrigin(side, writer, spec.origin, who);
}
