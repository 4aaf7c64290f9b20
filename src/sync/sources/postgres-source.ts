/**
 * PostgreSQL source: keyset pages (sql-keyset-reader.ts) over one pg client. Each page
 * runs in its own READ ONLY transaction with a statement timeout, as one parameterised
 * statement (the extended protocol runs exactly one), so a job's `query:` can neither
 * write to this database nor hold it. That is no sandbox: functions reach past the
 * transaction (files, programs, other sessions, dblink), so a role that may use them is
 * refused at connect unless the spec says `allowPrivilegedSource: true`
 * (postgres-privileges.ts).
 */
import pg from 'pg';
import { readSetting } from '../../../config/settings.ts';
import type { PostgresSourceSpec } from './source-spec.ts';
import type { SourceDeps } from './source-deps.ts';
import { requireEnvUrl } from './env-refs.ts';
import { redactSecrets, urlSecrets } from './redact.ts';
import { onAbort } from './on-abort.ts';
import { limitCalls } from './source-rate-limit.ts';
import { fromClause, readKeysetPages, type SqlDialect } from './sql-keyset-reader.ts';
import { SourceError, type SourceItem } from './source-error.ts';
import { pgWallClockTypes } from './sql-wall-clock-types.ts';
import { postgresPrivileges } from './postgres-privileges.ts';
import { privilegedSourceError } from './privileged-source-error.ts';

const postgresDialect: SqlDialect = {
  name: 'postgres',
  quoteIdent: (name) => `"${name.replaceAll('"', '""')}"`,
  placeholder: (n) => `$${n}`,
  asText: (expression) => `(${expression})::text`,
};

/** The client of a source; its connection options (type parsers included) live here only. */
function createPostgresClient(url: string): pg.Client {
  // A host that never answers must not hold a run forever (pg waits without limit by default).
  return new pg.Client({ connectionString: url, types: pgWallClockTypes, connectionTimeoutMillis: 10_000 });
}

/** One page: a READ ONLY transaction, its statement timeout, the query, commit. */
async function readOnlyQuery(
  client: pg.Client,
  sql: string,
  params: unknown[],
  timeoutMs: number,
): Promise<Array<Record<string, unknown>>> {
  await client.query('BEGIN READ ONLY');
  try {
    // set_config(.., true) is SET LOCAL: it ends with the transaction.
    await client.query({
      text: "SELECT set_config('statement_timeout', $1, true)",
      values: [String(timeoutMs)],
    });
    // queryMode 'extended' even without parameters: the simple protocol would run `a; b`.
    const result = await client.query<Record<string, unknown>>({
      text: sql,
      values: params,
      queryMode: 'extended',
    } as pg.QueryConfig);
    await client.query('COMMIT');
    return result.rows;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** Asks the server, over a second connection, to cancel what `client` is running. */
async function cancelBackend(url: string, client: pg.Client): Promise<void> {
  const pid = (client as unknown as { processID?: number | null }).processID;
  if (typeof pid !== 'number') return;
  const canceller = createPostgresClient(url);
  canceller.on('error', () => undefined);
  try {
    await canceller.connect();
    await canceller.query('SELECT pg_cancel_backend($1)', [pid]);
  } catch {
    // The connection is closed next anyway; the statement timeout bounds the rest.
  } finally {
    await canceller.end().catch(() => undefined);
  }
}

/** Streams the rows of a table or query in order of its cursor column. */
export async function* readPostgresSource(
  spec: PostgresSourceSpec,
  deps: SourceDeps,
): AsyncGenerator<SourceItem> {
  const url = requireEnvUrl(deps.env, spec.urlEnv, 'postgres source');
  const secrets = urlSecrets(url);
  const who = `postgres source (${spec.urlEnv})`;
  const timeoutMs = readSetting('sourceStatementTimeoutMs', deps.env) ?? 60_000;
  const client = createPostgresClient(url);
  // A dropped connection emits 'error' on the client; without a listener it would crash
  // the worker. The pending query rejects as well, and that is where it is reported.
  client.on('error', () => undefined);
  let privileges: string[];
  try {
    await client.connect();
    privileges = spec.allowPrivilegedSource === true ? [] : await postgresPrivileges(client);
  } catch (err) {
    await client.end().catch(() => undefined);
    throw new SourceError(
      'SOURCE_UNAVAILABLE',
      `${who}: cannot connect: ${redactSecrets((err as Error).message, secrets)}`,
    );
  }
  if (privileges.length > 0) {
    await client.end().catch(() => undefined);
    throw privilegedSourceError(who, privileges);
  }
  // An abort cancels the query in flight on the server (a closed socket alone would let it
  // run on to its statement timeout), then closes the connection.
  const stop = onAbort(
    deps.signal,
    () =>
      void cancelBackend(url, client)
        .finally(() => client.end())
        .catch(() => undefined),
  );
  // One slot of the job's source.rateLimit per page query.
  const queries = limitCalls(spec.rateLimit, deps.sourceGate, async (sql: string, params: unknown[]) => {
    try {
      return await readOnlyQuery(client, sql, params, timeoutMs);
    } catch (err) {
      throw queryError(err, who, secrets, timeoutMs);
    }
  });
  try {
    yield* readKeysetPages(spec, postgresDialect, queries.call, {
      since: deps.since,
      sinceInclusive: deps.sinceInclusive,
      until: deps.until,
      ids: deps.ids,
      signal: deps.signal,
    });
  } finally {
    stop();
    await queries.close();
    await client.end().catch(() => undefined);
  }
}

/**
 * The columns of the source's table or query (`rowbridge check`): over the same
 * privilege-checked connection and READ ONLY transaction a run reads with, no row read.
 */
export async function postgresSourceColumns(spec: PostgresSourceSpec, deps: SourceDeps): Promise<string[]> {
  const url = requireEnvUrl(deps.env, spec.urlEnv, 'postgres source');
  const secrets = urlSecrets(url);
  const who = `postgres source (${spec.urlEnv})`;
  const client = createPostgresClient(url);
  client.on('error', () => undefined);
  try {
    let privileges: string[];
    try {
      await client.connect();
      privileges = spec.allowPrivilegedSource === true ? [] : await postgresPrivileges(client);
    } catch (err) {
      throw new SourceError(
        'SOURCE_UNAVAILABLE',
        `${who}: cannot connect: ${redactSecrets((err as Error).message, secrets)}`,
      );
    }
    if (privileges.length > 0) throw privilegedSourceError(who, privileges);
    const sql = `SELECT * FROM ${fromClause(spec, postgresDialect)} LIMIT 0`;
    await client.query('BEGIN READ ONLY');
    try {
      const result = await client.query({ text: sql, values: [], queryMode: 'extended' } as pg.QueryConfig);
      return result.fields.map((f) => f.name);
    } catch (err) {
      throw queryError(err, who, secrets, 0);
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

function queryError(err: unknown, who: string, secrets: string[], timeoutMs: number): SourceError {
  const { code, hint } = err as { code?: unknown; hint?: unknown };
  // The server's hint names the column a typo meant ("Perhaps you meant to reference the
  // column rowbridge_src.updated_at").
  const said =
    typeof hint === 'string' && hint !== '' ? `${(err as Error).message}; ${hint}` : (err as Error).message;
  const message = redactSecrets(said, secrets);
  if (code === '25006') {
    return new SourceError(
      'SOURCE_CONFIG',
      `${who}: the query tried to write (${message}); source queries run in a READ ONLY transaction`,
    );
  }
  if (code === '57014') {
    return new SourceError(
      'SOURCE_UNAVAILABLE',
      `${who}: the query ran longer than ROWBRIDGE_SOURCE_STATEMENT_TIMEOUT_MS (${timeoutMs} ms) and was cancelled`,
    );
  }
  // SQLSTATE class 42 (undefined table/column, syntax) is a job mistake, not an outage.
  const kind = typeof code === 'string' && code.startsWith('42') ? 'SOURCE_CONFIG' : 'SOURCE_UNAVAILABLE';
  return new SourceError(kind, `${who}: query failed: ${message}`);
}
