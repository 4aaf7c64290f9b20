/**
 * The table side of a two-way job on MySQL or MariaDB, as table-side.ts is for
 * PostgreSQL: reads on their own connection in READ ONLY transactions, keyset-paged on the
 * key column; writes on a second connection (`writeUrlEnv`, else `urlEnv`), one
 * transaction per batch (the SQL both share is sql-table-side.ts's). Connections are
 * mysql-source.ts's (UTC session, exact BIGINT/DECIMAL text, DATE/DATETIME as wall
 * clocks, a statement time limit). An account holding more than SELECT, and INSERT,
 * UPDATE, DELETE on this one table, is refused unless the source says
 * `allowPrivilegedSource: true`.
 */
import type { Connection, ResultSetHeader } from 'mysql2/promise';
import { mysqlPrivileges } from '../sources/mysql-privileges.ts';
import { openMysqlConnection } from '../sources/mysql-source.ts';
import { SourceError } from '../sources/source-error.ts';
import type { MysqlSourceSpec } from '../sources/source-spec.ts';
import { createSqlTableSide } from './sql-table-side.ts';
import type { RunSql } from './sql-table-side.ts';
import { tableSideSettings } from './table-side-settings.ts';
import type { ColumnInfo, TableSide } from './table-side-types.ts';

const quote = (name: string) =>
  name
    .split('.')
    .map((part) => `\`${part.replaceAll('`', '``')}\``)
    .join('.');

/** Opens both connections and reads the table's columns; refuses a privileged account. */
export async function openMysqlTableSide(spec: MysqlSourceSpec, env: NodeJS.ProcessEnv): Promise<TableSide> {
  const settings = tableSideSettings(spec, env);
  const { table, keyColumn, who, timeoutMs, fail } = settings;
  const opened: Connection[] = [];
  const close = async () => {
    for (const c of opened) await c.end().catch(() => undefined);
  };
  try {
    for (const url of [settings.readUrl, settings.writeUrl]) {
      const c = await openMysqlConnection(url, timeoutMs);
      c.on('error', () => undefined);
      opened.push(c);
    }
  } catch (err) {
    await close();
    throw fail(err, 'cannot connect');
  }
  const [reader, writer] = opened as [Connection, Connection];
  const [schema, name] = table.includes('.') ? (table.split('.') as [string, string]) : [undefined, table];
  const [dbRows] = await reader.query('SELECT DATABASE() AS db');
  const db = schema ?? (dbRows as Array<{ db: string | null }>)[0]?.db ?? '';
  const writable = { schema: db, table: name };
  await settings.refusePrivileged(
    async () => [...(await mysqlPrivileges(reader, writable)), ...(await mysqlPrivileges(writer, writable))],
    close,
  );
  const [columnRows] = await reader.query(
    `SELECT COLUMN_NAME AS name, DATA_TYPE AS type, EXTRA AS extra
       FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`,
    [db, name],
  );
  const found = columnRows as Array<{ name: string; type: string; extra: string }>;
  if (found.length === 0) {
    await close();
    throw new SourceError('SOURCE_CONFIG', `${who}: no such table, or the account cannot see it`);
  }
  const columns = new Map<string, ColumnInfo>(
    found.map((c) => [
      c.name,
      {
        zoneLess: c.type.toLowerCase() === 'datetime' || c.type.toLowerCase() === 'date',
        generated: /GENERATED/i.test(c.extra),
      },
    ]),
  );
  const autoKey = found.some((c) => c.name === keyColumn && /auto_increment/i.test(c.extra));
  const runOn =
    (c: Connection): RunSql =>
    async (sql, params) => {
      const [rows] = params === undefined ? await c.query(sql) : await c.query(sql, params);
      return rows as Array<Record<string, unknown>>;
    };

  return createSqlTableSide({
    kind: 'mysql',
    table,
    keyColumn,
    columns,
    quote,
    placeholder: () => '?',
    read: runOn(reader),
    write: runOn(writer),
    beginRead: 'START TRANSACTION READ ONLY',
    beginWrite: 'START TRANSACTION',
    async insert(sql, params, values) {
      const [result] = await writer.query(sql, params);
      // No RETURNING: a generated key is the statement's insert id, else the key was written.
      const key = autoKey ? (result as ResultSetHeader).insertId : values[keyColumn];
      if (typeof key !== 'string' && typeof key !== 'number')
        throw new Error(`key column ${keyColumn} is not AUTO_INCREMENT and no field fills it`);
      return String(key);
    },
    fail,
    close,
  });
}
