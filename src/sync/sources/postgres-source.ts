/** PostgreSQL source: keyset pages (sql-keyset-reader.ts) over one pg client. */
import pg from 'pg';
import type { PostgresSourceSpec } from './source-spec.ts';
import type { SourceDeps } from './source-deps.ts';
import { requireEnvUrl } from './env-refs.ts';
import { redactSecrets, urlSecrets } from './redact.ts';
import { readKeysetPages, type SqlDialect } from './sql-keyset-reader.ts';
import { SourceError, type SourceItem } from './source-error.ts';
import { pgWallClockTypes } from './sql-wall-clock-types.ts';

const postgresDialect: SqlDialect = {
  name: 'postgres',
  quoteIdent: (name) => `"${name.replaceAll('"', '""')}"`,
  placeholder: (n) => `$${n}`,
  asText: (expression) => `(${expression})::text`,
};

/** Streams the rows of a table or query in order of its cursor column. */
export async function* readPostgresSource(spec: PostgresSourceSpec, deps: SourceDeps): AsyncGenerator<SourceItem> {
  const url = requireEnvUrl(deps.env, spec.urlEnv, 'postgres source');
  const secrets = urlSecrets(url);
  const who = `postgres source (${spec.urlEnv})`;
  const client = new pg.Client({ connectionString: url, types: pgWallClockTypes });
  // A dropped connection emits 'error' on the client; without a listener it would crash
  // the worker. The pending query rejects as well, and that is where it is reported.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw new SourceError('SOURCE_UNAVAILABLE', `${who}: cannot connect: ${redactSecrets((err as Error).message, secrets)}`);
  }
  try {
    yield* readKeysetPages(
      spec,
      postgresDialect,
      async (sql, params) => {
        try {
          return (await client.query<Record<string, unknown>>(sql, params)).rows;
        } catch (err) {
          const code = (err as { code?: unknown }).code;
          // SQLSTATE class 42 (undefined table/column, syntax) is a job mistake, not an outage.
          const kind = typeof code === 'string' && code.startsWith('42') ? 'SOURCE_CONFIG' : 'SOURCE_UNAVAILABLE';
          throw new SourceError(kind, `${who}: query failed: ${redactSecrets((err as Error).message, secrets)}`);
        }
      },
      { since: deps.since, sinceInclusive: deps.sinceInclusive, until: deps.until, signal: deps.signal },
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}
