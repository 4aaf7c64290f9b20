/**
 * Keyset pagination shared by the postgres and mysql sources. Each page is one short
 * query ordered by the cursor column, starting past the last row of the page before, so
 * no transaction or server cursor stays open while the engine writes (a paused mysql
 * stream is cut off by the server's net_write_timeout; an open postgres transaction holds
 * back vacuum).
 *
 * Ties: with `keyColumn` pages are keyed on (cursor, key), so rows sharing a cursor value
 * are never split and lost at a page edge. Without it, when a page is full, the rows that
 * share the page's last cursor value are dropped from it and the whole group is fetched
 * with `cursor = value`, then paging continues past that value. The group is held in
 * memory, so memory grows with the largest group of equal cursor values.
 *
 * Cursor values travel as the database's own text form (`::text`, `CAST(.. AS CHAR)`):
 * a JS Date keeps milliseconds, and a microsecond timestamp rounded to one would repeat
 * or skip rows. `record.cursor` is that text, and `since` is compared the same way.
 *
 * A backfill chunk adds `cursor <= until` to every page (the upper bound is inclusive, so
 * ties at it are all read) and its first chunk reads `cursor >= since`; the parameters
 * are text the database casts to the column's type, exactly like `since`.
 */
import type { SqlSourceSpec } from './source-spec.ts';
import type { SourceItem } from './source-error.ts';
import { isEmptyCursor } from './cursor-filter.ts';
import { closestName } from './closest-name.ts';
import { SourceError } from './source-error.ts';
import { firstStatement, statementProblem } from './sql-statement.ts';

/** How one database spells identifiers, placeholders and a cast to text. */
export interface SqlDialect {
  name: 'postgres' | 'mysql';
  quoteIdent(name: string): string;
  placeholder(n: number): string;
  asText(expression: string): string;
}

/** Runs one query and returns its rows; the source wraps driver errors. */
export type RunQuery = (sql: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>;

const CURSOR_ALIAS = '__rowbridge_cursor';
const KEY_ALIAS = '__rowbridge_key';
const SOURCE_ALIAS = 'rowbridge_src';

/** Checks the spec and builds the FROM clause. */
/** The FROM of a source's statements: its table, or its query as a subquery, aliased. */
export function fromClause(spec: SqlSourceSpec<'postgres' | 'mysql'>, dialect: SqlDialect): string {
  const hasTable = spec.table !== undefined && spec.table !== '';
  const hasQuery = spec.query !== undefined && spec.query.trim() !== '';
  if (hasTable === hasQuery) {
    throw new SourceError(
      'SOURCE_CONFIG',
      `${dialect.name} source: set exactly one of table and query (got ${hasTable ? 'both' : 'neither'})`,
    );
  }
  if (hasTable)
    return `${(spec.table ?? '')
      .split('.')
      .map((part) => dialect.quoteIdent(part))
      .join('.')} AS ${SOURCE_ALIAS}`;
  const query = spec.query ?? '';
  const problem = statementProblem(query, dialect.name);
  if (problem !== undefined) {
    throw new SourceError(
      'SOURCE_CONFIG',
      `${dialect.name} source: source.query must be one SELECT statement; ${problem}`,
    );
  }
  // The closing parenthesis goes on a line of its own: a `--` or `#` comment ending the
  // query cannot swallow it (and with it the WHERE, ORDER BY and LIMIT rowbridge adds).
  return `(${firstStatement(query, dialect.name).trim()}\n) AS ${SOURCE_ALIAS}`;
}

/**
 * A query that fails because the run was aborted (the source closed its connection on
 * the signal) reports the abort, not a "connection terminated" that reads like an outage.
 */
async function cancellable<T>(signal: AbortSignal | undefined, query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (err) {
    signal?.throwIfAborted();
    throw err;
  }
}

/** Reads the table or query page by page in cursor order. */
export async function* readKeysetPages(
  spec: SqlSourceSpec<'postgres' | 'mysql'>,
  dialect: SqlDialect,
  run: RunQuery,
  options: {
    since?: unknown;
    sinceInclusive?: boolean | undefined;
    until?: unknown;
    /** Only rows whose keyColumn (as text) is one of these. */
    ids?: readonly string[] | undefined;
    signal?: AbortSignal | undefined;
  },
): AsyncGenerator<SourceItem> {
  const batchSize = spec.batchSize ?? 1000;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new SourceError(
      'SOURCE_CONFIG',
      `${dialect.name} source: batchSize must be a whole number of at least 1, got ${String(batchSize)}`,
    );
  }
  const from = fromClause(spec, dialect);
  const c = `${SOURCE_ALIAS}.${dialect.quoteIdent(spec.cursorColumn)}`;
  const k =
    spec.keyColumn === undefined ? undefined : `${SOURCE_ALIAS}.${dialect.quoteIdent(spec.keyColumn)}`;
  const select = `SELECT ${SOURCE_ALIAS}.*, ${dialect.asText(c)} AS ${CURSOR_ALIAS}${k === undefined ? '' : `, ${dialect.asText(k)} AS ${KEY_ALIAS}`} FROM ${from}`;
  const order = `ORDER BY ${c}${k === undefined ? '' : `, ${k}`}`;
  let index = 0;
  // A key is selected only with a keyColumn.
  const idColumn = spec.keyColumn ?? '';
  const toItem = (row: Record<string, unknown>): SourceItem => {
    const { [CURSOR_ALIAS]: cursor, [KEY_ALIAS]: key, ...data } = row;
    const position = typeof key === 'string' ? { index: index++, id: key, idColumn } : { index: index++ };
    return { data, position, cursor };
  };
  const hasSince = !isEmptyCursor(options.since);
  let lastCursor: unknown = hasSince ? options.since : undefined;
  let lastKey: unknown;
  // Only the first page starts at `since` itself; later pages start past a row already read.
  let atSinceInclusive = hasSince && options.sinceInclusive === true;
  const until = isEmptyCursor(options.until) ? undefined : options.until;
  for (;;) {
    options.signal?.throwIfAborted();
    const params: unknown[] = [];
    const p = (value: unknown): string => {
      params.push(value);
      return dialect.placeholder(params.length);
    };
    let where = `${c} IS NOT NULL`;
    if (lastCursor !== undefined) {
      const after = atSinceInclusive ? '>=' : '>';
      where +=
        k === undefined || lastKey === undefined
          ? ` AND ${c} ${after} ${p(lastCursor)}`
          : ` AND (${c} > ${p(lastCursor)} OR (${c} = ${p(lastCursor)} AND ${k} > ${p(lastKey)}))`;
    }
    if (until !== undefined) where += ` AND ${c} <= ${p(until)}`;
    if (options.ids !== undefined) {
      if (k === undefined || options.ids.length === 0) return;
      where += ` AND ${dialect.asText(k)} IN (${options.ids.map((id) => p(id)).join(', ')})`;
    }
    atSinceInclusive = false;
    const rows = await cancellable(options.signal, () =>
      run(`${select} WHERE ${where} ${order} LIMIT ${batchSize}`, params),
    ).catch(async (err: unknown) => {
      throw index === 0 ? await withColumnHint(err, spec, from, run) : err;
    });
    const last = rows[rows.length - 1];
    if (rows.length < batchSize || last === undefined) {
      for (const row of rows) yield toItem(row);
      return;
    }
    if (k !== undefined) {
      for (const row of rows) yield toItem(row);
      lastCursor = last[CURSOR_ALIAS];
      lastKey = last[KEY_ALIAS];
      continue;
    }
    const edge = last[CURSOR_ALIAS];
    for (const row of rows) if (row[CURSOR_ALIAS] !== edge) yield toItem(row);
    const ties = await cancellable(options.signal, () =>
      run(`${select} WHERE ${c} = ${dialect.placeholder(1)} ${order}`, [edge]),
    );
    for (const row of ties) yield toItem(row);
    lastCursor = edge;
  }
}

// A column the server does not know, as PostgreSQL and MySQL/MariaDB word it.
const UNKNOWN_COLUMN = [
  /column "?(?:\w+\.)?([^"\s]+)"? does not exist/,
  /Unknown column '(?:\w+\.)?([^']+)'/,
];

/**
 * The first page's error, with the column a typo most likely meant when the server did
 * not know one the job names (`cursorColumn: updatedat` → "did you mean updated_at?").
 * The columns are read from one row of the source; an empty source gets no hint. (On
 * PostgreSQL the failed statement has aborted the transaction, so that read fails and
 * the server's own hint, which postgres-source.ts adds to the message, stands.)
 */
async function withColumnHint(
  err: unknown,
  spec: SqlSourceSpec<'postgres' | 'mysql'>,
  from: string,
  run: RunQuery,
): Promise<unknown> {
  if (!(err instanceof SourceError) || /did you mean|perhaps you meant/i.test(err.message)) return err;
  const unknown = UNKNOWN_COLUMN.map((re) => re.exec(err.message)?.[1]).find((name) => name !== undefined);
  if (unknown === undefined) return err;
  const named = (
    [
      ['cursorColumn', spec.cursorColumn],
      ['keyColumn', spec.keyColumn],
    ] as const
  ).find(([, column]) => column === unknown)?.[0];
  const row = (await run(`SELECT * FROM ${from} LIMIT 1`, []).catch(() => []))[0];
  const suggestion = row === undefined ? undefined : closestName(unknown, Object.keys(row));
  if (suggestion === undefined || suggestion === unknown) return err;
  const where = named === undefined ? '' : ` (source.${named})`;
  return new SourceError(err.code, `${err.message}${where}; did you mean ${suggestion}?`);
}
