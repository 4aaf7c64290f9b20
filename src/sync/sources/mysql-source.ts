/** MySQL/MariaDB source: keyset pages (sql-keyset-reader.ts) over one mysql2 connection. */
import mysql from 'mysql2/promise';
import type { MysqlSourceSpec } from './source-spec.ts';
import type { SourceDeps } from './source-deps.ts';
import { requireEnvUrl } from './env-refs.ts';
import { redactSecrets, urlSecrets } from './redact.ts';
import { readKeysetPages, type SqlDialect } from './sql-keyset-reader.ts';
import { SourceError, type SourceItem } from './source-error.ts';
import { MYSQL_WALL_CLOCK_TYPES } from './sql-wall-clock-types.ts';

const mysqlDialect: SqlDialect = {
  name: 'mysql',
  quoteIdent: (name) => `\`${name.replaceAll('`', '``')}\``,
  placeholder: () => '?',
  asText: (expression) => `CAST(${expression} AS CHAR)`,
};

// Syntax, unknown column/table: a job mistake rather than an outage.
const CONFIG_ERRORS = new Set(['ER_PARSE_ERROR', 'ER_BAD_FIELD_ERROR', 'ER_NO_SUCH_TABLE', 'ER_BAD_DB_ERROR', 'ER_NON_UNIQ_ERROR']);

/** Streams the rows of a table or query in order of its cursor column. */
export async function* readMysqlSource(spec: MysqlSourceSpec, deps: SourceDeps): AsyncGenerator<SourceItem> {
  const url = requireEnvUrl(deps.env, spec.urlEnv, 'mysql source');
  const secrets = urlSecrets(url);
  const who = `mysql source (${spec.urlEnv})`;
  let connection;
  try {
    // Exact strings for BIGINT/DECIMAL (as pg gives them), and UTC both in the driver and in
    // the session, so TIMESTAMP cursor text means the same instant on every run.
    connection = await mysql.createConnection({ uri: url, timezone: 'Z', dateStrings: MYSQL_WALL_CLOCK_TYPES, supportBigNumbers: true, bigNumberStrings: true });
    await connection.query("SET time_zone = '+00:00'");
  } catch (err) {
    await connection?.end().catch(() => undefined);
    throw new SourceError('SOURCE_UNAVAILABLE', `${who}: cannot connect: ${redactSecrets((err as Error).message, secrets)}`);
  }
  const conn = connection;
  conn.on('error', () => undefined);
  try {
    yield* readKeysetPages(
      spec,
      mysqlDialect,
      async (sql, params) => {
        try {
          const [rows] = await conn.query(sql, params);
          return rows as Array<Record<string, unknown>>;
        } catch (err) {
          const code = (err as { code?: unknown }).code;
          const kind = typeof code === 'string' && CONFIG_ERRORS.has(code) ? 'SOURCE_CONFIG' : 'SOURCE_UNAVAILABLE';
          throw new SourceError(kind, `${who}: query failed: ${redactSecrets((err as Error).message, secrets)}`);
        }
      },
      { since: deps.since, sinceInclusive: deps.sinceInclusive, until: deps.until, signal: deps.signal },
    );
  } finally {
    await conn.end().catch(() => undefined);
  }
}
