/**
 * MySQL/MariaDB source: keyset pages (sql-keyset-reader.ts) over one mysql2 connection.
 * Each page is one parameterised statement in its own READ ONLY transaction, under a
 * session statement timeout. Multi-statement support stays off, so the server refuses a
 * second statement. (Not `execute`: the binary protocol drops the zero fraction of
 * DATETIME(6) values, and cursor text must stay the column's own text form.) The READ
 * ONLY transaction stops table writes only, so an account with FILE or write grants is
 * refused at connect unless the spec says `allowPrivilegedSource: true`
 * (mysql-privileges.ts).
 */
import mysql from 'mysql2/promise';
import type { Connection } from 'mysql2/promise';
import { readSetting } from '../../../config/settings.ts';
import type { MysqlSourceSpec } from './source-spec.ts';
import type { SourceDeps } from './source-deps.ts';
import { requireEnvUrl } from './env-refs.ts';
import { redactSecrets, urlSecrets } from './redact.ts';
import { onAbort } from './on-abort.ts';
import { limitCalls } from './source-rate-limit.ts';
import { fromClause, readKeysetPages, type SqlDialect } from './sql-keyset-reader.ts';
import { SourceError, type SourceItem } from './source-error.ts';
import { MYSQL_WALL_CLOCK_TYPES } from './sql-wall-clock-types.ts';
import { mysqlPrivileges } from './mysql-privileges.ts';
import { privilegedSourceError } from './privileged-source-error.ts';

const mysqlDialect: SqlDialect = {
  name: 'mysql',
  quoteIdent: (name) => `\`${name.replaceAll('`', '``')}\``,
  placeholder: () => '?',
  asText: (expression) => `CAST(${expression} AS CHAR)`,
};

// Syntax, unknown column/table: a job mistake rather than an outage.
const CONFIG_ERRORS = new Set([
  'ER_PARSE_ERROR',
  'ER_BAD_FIELD_ERROR',
  'ER_NO_SUCH_TABLE',
  'ER_BAD_DB_ERROR',
  'ER_NON_UNIQ_ERROR',
]);

/**
 * The connection of a source; its options (type handling included) live here only.
 * Exact strings for BIGINT/DECIMAL (as pg gives them), and UTC both in the driver and in
 * the session, so TIMESTAMP cursor text means the same instant on every run. The
 * timeout is the session's: a SELECT cannot change a system variable.
 *
 * mysql2 puts parameters into the text with backslash escapes. Under a server's
 * NO_BACKSLASH_ESCAPES a backslash is a plain character, so a cursor or key value read
 * from the table could close its string and write the next page's WHERE; the session
 * drops that mode before any value is sent.
 */
export async function openMysqlConnection(url: string, timeoutMs: number): Promise<Connection> {
  const connection = await mysql.createConnection({
    uri: url,
    timezone: 'Z',
    dateStrings: MYSQL_WALL_CLOCK_TYPES,
    supportBigNumbers: true,
    bigNumberStrings: true,
    multipleStatements: false,
  });
  try {
    await connection.query("SET time_zone = '+00:00'");
    const [modes] = await connection.query('SELECT @@SESSION.sql_mode AS mode');
    const mode = (modes as Array<{ mode?: string }>)[0]?.mode ?? '';
    if (/NO_BACKSLASH_ESCAPES/i.test(mode)) {
      // The value is sql_mode's own letters, underscores and commas: safe in either mode.
      const kept = mode.split(',').filter((name) => name.toUpperCase() !== 'NO_BACKSLASH_ESCAPES');
      await connection.query('SET SESSION sql_mode = ?', [kept.join(',')]);
    }
    const [rows] = await connection.query('SELECT VERSION() AS version');
    const version = (rows as Array<{ version?: string }>)[0]?.version ?? '';
    // MariaDB names it max_statement_time (seconds), MySQL max_execution_time (ms).
    if (/mariadb/i.test(version))
      await connection.query('SET SESSION max_statement_time = ?', [timeoutMs / 1000]);
    else await connection.query('SET SESSION max_execution_time = ?', [timeoutMs]);
  } catch (err) {
    await connection.end().catch(() => undefined);
    throw err;
  }
  return connection;
}

/** One page: a READ ONLY transaction around one statement. */
async function readOnlyQuery(
  conn: Connection,
  sql: string,
  params: unknown[],
): Promise<Array<Record<string, unknown>>> {
  await conn.query('START TRANSACTION READ ONLY');
  try {
    const [rows] = await conn.query(sql, params);
    await conn.query('COMMIT');
    return rows as Array<Record<string, unknown>>;
  } catch (err) {
    await conn.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** Asks the server, over a second connection, to stop the query of thread `threadId`. */
async function killQuery(url: string, timeoutMs: number, threadId: number | null): Promise<void> {
  if (threadId === null) return;
  try {
    const killer = await openMysqlConnection(url, timeoutMs);
    killer.on('error', () => undefined);
    await killer.query(`KILL QUERY ${Number(threadId)}`).catch(() => undefined);
    await killer.end().catch(() => undefined);
  } catch {
    // The connection is dropped next anyway; the statement time limit bounds the rest.
  }
}

/** Streams the rows of a table or query in order of its cursor column. */
export async function* readMysqlSource(spec: MysqlSourceSpec, deps: SourceDeps): AsyncGenerator<SourceItem> {
  const url = requireEnvUrl(deps.env, spec.urlEnv, 'mysql source');
  const secrets = urlSecrets(url);
  const who = `mysql source (${spec.urlEnv})`;
  const timeoutMs = readSetting('sourceStatementTimeoutMs', deps.env) ?? 60_000;
  let connection;
  let privileges: string[];
  try {
    connection = await openMysqlConnection(url, timeoutMs);
    privileges = spec.allowPrivilegedSource === true ? [] : await mysqlPrivileges(connection);
  } catch (err) {
    await connection?.end().catch(() => undefined);
    throw new SourceError(
      'SOURCE_UNAVAILABLE',
      `${who}: cannot connect: ${redactSecrets((err as Error).message, secrets)}`,
    );
  }
  const conn = connection;
  if (privileges.length > 0) {
    await conn.end().catch(() => undefined);
    throw privilegedSourceError(who, privileges);
  }
  conn.on('error', () => undefined);
  // An abort kills the query in flight on the server (a dropped socket alone would let it
  // run on to its time limit), then drops the connection.
  const stop = onAbort(
    deps.signal,
    () => void killQuery(url, timeoutMs, conn.threadId).finally(() => conn.destroy()),
  );
  // One slot of the job's source.rateLimit per page query.
  const queries = limitCalls(spec.rateLimit, deps.sourceGate, async (sql: string, params: unknown[]) => {
    try {
      return await readOnlyQuery(conn, sql, params);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      const message = redactSecrets((err as Error).message, secrets);
      if (code === 'ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION') {
        throw new SourceError(
          'SOURCE_CONFIG',
          `${who}: the query tried to write (${message}); source queries run in a READ ONLY transaction`,
        );
      }
      // MariaDB 1969 (max_statement_time), MySQL 3024 (max_execution_time); mysql2 names only the latter.
      const errno = (err as { errno?: unknown }).errno;
      if (errno === 1969 || errno === 3024) {
        throw new SourceError(
          'SOURCE_UNAVAILABLE',
          `${who}: the query ran longer than ROWBRIDGE_SOURCE_STATEMENT_TIMEOUT_MS (${timeoutMs} ms) and was stopped`,
        );
      }
      const kind =
        typeof code === 'string' && CONFIG_ERRORS.has(code) ? 'SOURCE_CONFIG' : 'SOURCE_UNAVAILABLE';
      throw new SourceError(kind, `${who}: query failed: ${message}`);
    }
  });
  try {
    yield* readKeysetPages(spec, mysqlDialect, queries.call, {
      since: deps.since,
      sinceInclusive: deps.sinceInclusive,
      until: deps.until,
      ids: deps.ids,
      signal: deps.signal,
    });
  } finally {
    stop();
    await queries.close();
    await conn.end().catch(() => undefined);
  }
}

/**
 * The columns of the source's table or query (`rowbridge check`): over the same
 * privilege-checked connection and READ ONLY transaction a run reads with, no row read.
 */
export async function mysqlSourceColumns(
  spec: MysqlSourceSpec,
  deps: SourceDeps,
  /** A two-way job's table, which its login also writes (mysql-privileges.ts). */
  twoWay = false,
): Promise<string[]> {
  const url = requireEnvUrl(deps.env, spec.urlEnv, 'mysql source');
  const secrets = urlSecrets(url);
  const who = `mysql source (${spec.urlEnv})`;
  let conn: Connection | undefined;
  try {
    let privileges: string[];
    try {
      conn = await openMysqlConnection(url, readSetting('sourceStatementTimeoutMs', deps.env) ?? 60_000);
      conn.on('error', () => undefined);
      const [schema, table] = spec.table?.includes('.') ? spec.table.split('.') : [undefined, spec.table];
      const writable = twoWay && table !== undefined ? { schema, table } : undefined;
      privileges = spec.allowPrivilegedSource === true ? [] : await mysqlPrivileges(conn, writable);
    } catch (err) {
      throw new SourceError(
        'SOURCE_UNAVAILABLE',
        `${who}: cannot connect: ${redactSecrets((err as Error).message, secrets)}`,
      );
    }
    if (privileges.length > 0) throw privilegedSourceError(who, privileges);
    await conn.query('START TRANSACTION READ ONLY');
    try {
      const [, fields] = await conn.query(`SELECT * FROM ${fromClause(spec, mysqlDialect)} LIMIT 0`);
      return (fields ?? []).map((f) => f.name);
    } catch (err) {
      throw new SourceError(
        'SOURCE_CONFIG',
        `${who}: query failed: ${redactSecrets((err as Error).message, secrets)}`,
      );
    } finally {
      await conn.query('ROLLBACK').catch(() => undefined);
    }
  } finally {
    await conn?.end().catch(() => undefined);
  }
}
