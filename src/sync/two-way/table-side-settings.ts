/**
 * What both SQL table sides (table-side.ts for PostgreSQL, mysql-table-side.ts for
 * MySQL/MariaDB) open their connections from and how their errors read, kept in one place
 * so the two cannot drift: the same URL lookup, the same redaction of credentials, the
 * same refusal of a privileged login.
 */
import { readSetting } from '../../../config/settings.ts';
import { requireEnvUrl } from '../sources/env-refs.ts';
import { privilegedSourceError } from '../sources/privileged-source-error.ts';
import { redactSecrets, urlSecrets } from '../sources/redact.ts';
import { SourceError } from '../sources/source-error.ts';
import type { MysqlSourceSpec, PostgresSourceSpec } from '../sources/source-spec.ts';

/** A table side's table, connection URLs and error wording, read from its spec. */
export interface TableSideSettings {
  table: string;
  keyColumn: string;
  readUrl: string;
  /** `writeUrlEnv`'s URL, else the read URL. */
  writeUrl: string;
  /** Names the table and its URL variable in every message, e.g. `postgres table t (DB_URL)`. */
  who: string;
  timeoutMs: number;
  /** A connection or statement failure as SOURCE_UNAVAILABLE, credentials redacted. */
  fail: (err: unknown, what: string) => SourceError;
  /** Throws the privileged-source error (after `close`) when `reasons` finds any, unless the spec allows it. */
  refusePrivileged: (reasons: () => Promise<string[]>, close: () => Promise<void>) => Promise<void>;
}

/** Reads a table side's settings from its spec and the environment. */
export function tableSideSettings(
  spec: PostgresSourceSpec | MysqlSourceSpec,
  env: NodeJS.ProcessEnv,
): TableSideSettings {
  const table = spec.table!;
  const readUrl = requireEnvUrl(env, spec.urlEnv, 'two-way table');
  const writeUrl =
    spec.writeUrlEnv === undefined ? readUrl : requireEnvUrl(env, spec.writeUrlEnv, 'two-way table (writes)');
  const secrets = [...urlSecrets(readUrl), ...urlSecrets(writeUrl)];
  const who = `${spec.type} table ${table} (${spec.urlEnv})`;
  return {
    table,
    keyColumn: spec.keyColumn!,
    readUrl,
    writeUrl,
    who,
    timeoutMs: readSetting('sourceStatementTimeoutMs', env) ?? 60_000,
    fail: (err, what) =>
      new SourceError(
        'SOURCE_UNAVAILABLE',
        `${who}: ${what}: ${redactSecrets((err as Error).message, secrets)}`,
        {
          cause: err,
        },
      ),
    async refusePrivileged(reasons, close) {
      if (spec.allowPrivilegedSource === true) return;
      const found = await reasons();
      if (found.length > 0) {
        await close();
        throw privilegedSourceError(who, [...new Set(found)]);
      }
    },
  };
}
