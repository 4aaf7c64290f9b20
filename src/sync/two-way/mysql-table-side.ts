/**
 * The table side of a two-way job on MySQL or MariaDB, as table-side.ts is for
 * PostgreSQL: reads on their own connection in READ ONLY transactions, keyset-paged on the
 * key column; writes on a second connection (`writeUrlEnv`, else `urlEnv`), one
 * transaction per batch. Connections are mysql-source.ts's (UTC session, exact
 * BIGINT/DECIMAL text, DATE/DATETIME as wall clocks, a statement time limit). An account
 * holding more than SELECT, and INSERT, UPDATE, DELETE on this one table, is refused unless
 * the source says `allowPrivilegedSource: true`.
 */
import type { Connection, ResultSetHeader } from 'mysql2/promise';
import { readSetting } from '../../../config/settings.ts';
import { requireEnvUrl } from '../sources/env-refs.ts';
import { mysqlPrivileges } from '../sources/mysql-privileges.ts';
import { openMysqlConnection } from '../sources/mysql-source.ts';
import { privilegedSourceError } from '../sources/privileged-source-error.ts';
import { redactSecrets, urlSecrets } from '../sources/redact.ts';
import { SourceError } from '../sources/source-error.ts';
import type { MysqlSourceSpec } from '../sources/source-spec.ts';
import type { ColumnInfo, TableRecord, TableSide } from './table-side-types.ts';

const quote = (name: string) =>
  name
    .split('.')
    .map((part) => `\`${part.replaceAll('`', '``')}\``)
    .join('.');

const PAGE = 5000;

/** Opens both connections and reads the table's columns; refuses a privileged account. */
export async function openMysqlTableSide(spec: MysqlSourceSpec, env: NodeJS.ProcessEnv): Promise<TableSide> {
  const table = spec.table!;
  const keyColumn = spec.keyColumn!;
  const readUrl = requireEnvUrl(env, spec.urlEnv, 'two-way table');
  const writeUrl =
    spec.writeUrlEnv === undefined ? readUrl : requireEnvUrl(env, spec.writeUrlEnv, 'two-way table (writes)');
  const secrets = [...urlSecrets(readUrl), ...urlSecrets(writeUrl)];
  const who = `mysql table ${table} (${spec.urlEnv})`;
  const timeoutMs = readSetting('sourceStatementTimeoutMs', env) ?? 60_000;
  const fail = (err: unknown, what: string) =>
    new SourceError(
      'SOURCE_UNAVAILABLE',
      `${who}: ${what}: ${redactSecrets((err as Error).message, secrets)}`,
      { cause: err },
    );
  const opened: Connection[] = [];
  const close = async () => {
    for (const c of opened) await c.end().catch(() => undefined);
  };
  try {
    for (const url of [readUrl, writeUrl]) {
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
  if (spec.allowPrivilegedSource !== true) {
    const writable = { schema: db, table: name };
    const reasons = [
      ...(await mysqlPrivileges(reader, writable)),
      ...(await mysqlPrivileges(writer, writable)),
    ];
    if (reasons.length > 0) {
      await close();
      throw privilegedSourceError(who, [...new Set(reasons)]);
    }
  }
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

  async function readOnly(sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>> {
    await reader.query('START TRANSACTION READ ONLY');
    try {
      const [rows] = await reader.query(sql, params);
      await reader.query('COMMIT');
      return rows as Array<Record<string, unknown>>;
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
          `SELECT ${list} FROM ${quote(table)}${last === undefined ? '' : ` WHERE ${quote(keyColumn)} > ?`} ORDER BY ${quote(keyColumn)} LIMIT ${PAGE}`,
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
        await writer.query('START TRANSACTION');
        for (const u of batch.updates) {
          const cols = Object.keys(u.set);
          if (cols.length === 0) continue;
          await writer.query(
            `UPDATE ${quote(table)} SET ${cols.map((c) => `${quote(c)} = ?`).join(', ')} WHERE ${quote(keyColumn)} = ?`,
            [...cols.map((c) => u.set[c]), u.key],
          );
        }
        for (const ins of batch.inserts) {
          const cols = Object.keys(ins.values);
          const [result] = await writer.query(
            `INSERT INTO ${quote(table)} (${cols.map(quote).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
            cols.map((c) => ins.values[c]),
          );
          // No RETURNING: a generated key is the statement's insert id, else the key was written.
          const key = autoKey ? (result as ResultSetHeader).insertId : ins.values[keyColumn];
          if (typeof key !== 'string' && typeof key !== 'number')
            throw new Error(`key column ${keyColumn} is not AUTO_INCREMENT and no field fills it`);
          created.set(ins.ref, String(key));
        }
        for (let i = 0; i < batch.deletes.length; i += 500) {
          const keys = batch.deletes.slice(i, i + 500);
          await writer.query(
            `DELETE FROM ${quote(table)} WHERE ${quote(keyColumn)} IN (${keys.map(() => '?').join(', ')})`,
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
