/**
 * Postgres sink: upserts records by a key column with INSERT ... ON CONFLICT (key) DO
 * UPDATE, one transaction per `write`, so a failed batch leaves nothing half-written.
 * Every identifier is quoted; values travel as parameters. A column missing from a
 * record is set to NULL: a record is the whole state of its row; so is an empty value.
 */
import pg from 'pg';
import { redactSecrets, urlSecrets } from '../sources/redact.ts';
import type { PostgresSinkSpec, Sink, SinkDeps } from './sink-spec.ts';
import { SinkError, type SinkErrorCode } from './sink-error.ts';

// Postgres takes at most 65535 parameters per statement.
const MAX_PARAMS = 60_000;

const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;

function valueType(value: unknown): 'jsonb' | 'text' {
  return value !== null && typeof value === 'object' && !(value instanceof Date) ? 'jsonb' : 'text';
}

function keyText(value: unknown): string {
  if (typeof value === 'bigint') return value.toString();
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

function errorKind(err: unknown): SinkErrorCode {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return 'SINK_UNAVAILABLE';
  // 42: undefined table/column, missing unique constraint for ON CONFLICT. 22/23: bad data.
  if (code.startsWith('42')) return 'SINK_CONFIG';
  if (code.startsWith('22') || code.startsWith('23')) return 'SINK_INVALID_RECORD';
  return 'SINK_UNAVAILABLE';
}

/** Creates a postgres sink; it connects on the first write. */
export function createPostgresSink(spec: PostgresSinkSpec, deps: SinkDeps): Sink {
  const table = spec.table.split('.').map(quoteIdent).join('.');
  const who = `postgres sink ${spec.table} (${spec.urlEnv})`;
  let client: pg.Client | undefined;
  let secrets: string[] = [];
  /** Column name → whether it holds JSON (json/jsonb), loaded once and kept up to date. */
  let columns: Map<string, boolean> | undefined;
  // The worksheet field's type when the pull knows it (a Number field is numeric), else the value's.
  const columnType = (name: string, value: unknown): string => deps.columnTypes?.[name] ?? valueType(value);
  /** Rows committed so far, so a message can say which rows of the run are at fault. */
  let written = 0;

  const fail = (err: unknown, what: string): SinkError =>
    err instanceof SinkError
      ? err
      : new SinkError(errorKind(err), `${who}: ${what}: ${redactSecrets((err as Error).message, secrets)}`);

  const connect = async (): Promise<pg.Client> => {
    if (client !== undefined) return client;
    const url = deps.env[spec.urlEnv];
    if (url === undefined || url.trim() === '') {
      throw new SinkError(
        'SINK_CONFIG',
        `postgres sink: urlEnv names ${spec.urlEnv}, but that environment variable is not set`,
      );
    }
    secrets = urlSecrets(url);
    // A host that never answers must not hold a run forever (pg waits without limit by default).
    const next = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
    next.on('error', () => undefined);
    try {
      await next.connect();
    } catch (err) {
      await next.end().catch(() => undefined);
      throw new SinkError(
        'SINK_UNAVAILABLE',
        `${who}: cannot connect: ${redactSecrets((err as Error).message, secrets)}`,
      );
    }
    client = next;
    return next;
  };

  const loadColumns = async (db: pg.Client): Promise<Map<string, boolean> | undefined> => {
    const found = await db.query<{ name: string; type: string }>(
      `SELECT attname AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute
       WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`,
      [table],
    );
    if (found.rows.length === 0) return undefined;
    return new Map(found.rows.map((row) => [row.name, row.type === 'jsonb' || row.type === 'json']));
  };

  /** Creates the table or its missing columns (createTable), else checks they exist. */
  const ensureColumns = async (
    db: pg.Client,
    names: string[],
    sample: (name: string) => unknown,
  ): Promise<Map<string, boolean>> => {
    columns ??= await loadColumns(db);
    if (columns === undefined) {
      if (spec.createTable !== true)
        throw new SinkError(
          'SINK_CONFIG',
          `${who}: table ${spec.table} does not exist; create it or set createTable: true`,
        );
      const defs = names
        .filter((n) => n !== spec.key)
        .map((n) => `${quoteIdent(n)} ${columnType(n, sample(n))}`);
      await db.query(
        `CREATE TABLE IF NOT EXISTS ${table} (${[`${quoteIdent(spec.key)} text PRIMARY KEY`, ...defs].join(', ')})`,
      );
      columns = (await loadColumns(db)) ?? new Map();
    }
    const known = columns;
    const missing = names.filter((n) => !known.has(n));
    if (missing.length > 0 && spec.createTable !== true) {
      throw new SinkError(
        'SINK_CONFIG',
        `${who}: column(s) ${missing.join(', ')} do not exist in ${spec.table}; its columns are ${[...known.keys()].join(', ')}`,
      );
    }
    for (const name of missing) {
      await db.query(
        `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${quoteIdent(name)} ${columnType(name, sample(name))}`,
      );
      known.set(name, columnType(name, sample(name)) === 'jsonb');
    }
    return known;
  };

  const toParam = (value: unknown, json: boolean): unknown => {
    // One form for "no value", whatever the field's kind: an empty text or list is NULL,
    // so `WHERE col IS NULL` finds every empty cell (and a numeric column can hold it).
    if (value === undefined || value === null || value === '') return null;
    if (Array.isArray(value) && value.length === 0) return null;
    if (json) return JSON.stringify(value);
    // A list of texts (a multi-value field) in a text column made before such columns were
    // jsonb keeps the form that column always held.
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(', ');
    if (typeof value === 'object' && !(value instanceof Date)) return JSON.stringify(value);
    if (typeof value === 'bigint') return value.toString();
    return value;
  };

  const upsert = async (db: pg.Client, records: Array<Record<string, unknown>>): Promise<void> => {
    const bad = records.flatMap((r, i) =>
      r[spec.key] === undefined || r[spec.key] === null || r[spec.key] === '' ? [i] : [],
    );
    if (bad.length > 0) {
      throw new SinkError(
        'SINK_INVALID_RECORD',
        `${who}: row(s) ${bad.map((i) => written + i + 1).join(', ')} of this run have no value in key column ${spec.key}`,
        bad,
      );
    }
    // ON CONFLICT cannot touch one row twice in a statement: the last record of a key wins.
    const byKey = new Map<string, Record<string, unknown>>();
    for (const record of records) byKey.set(keyText(record[spec.key]), record);
    const rows = [...byKey.values()];
    const names = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    const sample = (name: string): unknown =>
      rows.find((r) => r[name] !== undefined && r[name] !== null)?.[name];
    const known = await ensureColumns(db, names, sample);
    const columnList = names.map(quoteIdent).join(', ');
    const updates = names
      .filter((n) => n !== spec.key)
      .map((n) => `${quoteIdent(n)} = EXCLUDED.${quoteIdent(n)}`);
    const onConflict = updates.length === 0 ? 'DO NOTHING' : `DO UPDATE SET ${updates.join(', ')}`;
    const perStatement = Math.max(1, Math.min(1000, Math.floor(MAX_PARAMS / names.length)));
    for (let start = 0; start < rows.length; start += perStatement) {
      const params: unknown[] = [];
      const tuples = rows.slice(start, start + perStatement).map((row) => {
        const slots = names.map((n) => {
          params.push(toParam(row[n], known.get(n) === true));
          return `$${params.length}`;
        });
        return `(${slots.join(', ')})`;
      });
      await db.query(
        `INSERT INTO ${table} (${columnList}) VALUES ${tuples.join(', ')} ON CONFLICT (${quoteIdent(spec.key)}) ${onConflict}`,
        params,
      );
    }
  };

  let tail: Promise<void> = Promise.resolve();
  const writeBatch = async (records: Array<Record<string, unknown>>): Promise<void> => {
    if (records.length === 0) return;
    const db = await connect();
    try {
      await db.query('BEGIN');
      await upsert(db, records);
      await db.query('COMMIT');
      written += records.length;
    } catch (err) {
      await db.query('ROLLBACK').catch(() => undefined);
      // The table shape may have been created or altered in the rolled-back transaction.
      columns = undefined;
      throw fail(err, `upsert of rows ${written + 1}-${written + records.length} of this run failed`);
    }
  };

  const close = async (): Promise<void> => {
    await tail;
    const current = client;
    client = undefined;
    await current?.end();
  };

  return {
    write(records) {
      const next = tail.then(() => writeBatch(records));
      tail = next.catch(() => undefined);
      return next;
    },
    close,
    // Each batch is its own committed upsert: a failed run keeps what it wrote, and the
    // re-run upserts the same keys again rather than adding rows.
    abort: close,
  };
}
