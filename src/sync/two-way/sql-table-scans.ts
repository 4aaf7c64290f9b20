/**
 * The reads an incremental two-way run makes of a SQL table, on PostgreSQL and
 * MySQL/MariaDB alike (sql-table-side.ts passes its dialect and READ ONLY runner):
 * - a key scan: the key and the match columns of every record (`SELECT keyColumn, ...`),
 *   with a short hash of the mapped columns when the table has no `updatedAtColumn`
 *   (`md5(ROW(...)::text)` on PostgreSQL, `MD5(JSON_ARRAY(...))` on MySQL), so a run
 *   finds its deletes and its changed records without reading whole rows;
 * - the records changed since a cursor (`updatedAtColumn > since`);
 * - given records by key (`keyColumn IN (...)`).
 * Every read is keyset-paged on the key column, each page in its own READ ONLY transaction.
 *
 * And the database's clock, which the table's cursor is capped by (read-sides.ts): an
 * `updatedAtColumn` filled by `now()` or `CURRENT_TIMESTAMP` is on the database's clock,
 * not this machine's. A transaction stamps its rows with a time earlier than its commit:
 * PostgreSQL's `now()` is the transaction's start, MySQL's the statement's. One that
 * stamped rows before the reads and commits after them would sit below a cap taken from
 * the clock alone, so the cap is the earlier of the clock and the start of the oldest
 * transaction in progress that has written: on PostgreSQL one that has written this table
 * (its lock in `pg_locks`, its start in `pg_stat_activity`), on MySQL any
 * (`information_schema.INNODB_TRX` names no table). PostgreSQL shows other roles' transactions only
 * to a superuser or a member of `pg_read_all_stats`, MySQL shows INNODB_TRX only with
 * PROCESS: unseen, such a transaction is covered by the margin alone (`check` says so).
 * A transaction that writes its first row only after the reads start, with a start
 * older than the margin, is not covered.
 */
import { createZoneClock } from '../../api/zone-clock.ts';
import type { ScannedRecord, TableRecord, TableScans } from './table-side-types.ts';

const UTC = createZoneClock('UTC');

const PAGE = 5000;
const KEYS_PER_QUERY = 500;

/** What the scans need of the table side's dialect. */
export interface ScanDialect {
  kind: 'postgres' | 'mysql';
  table: string;
  keyColumn: string;
  quote: (name: string) => string;
  placeholder: (n: number) => string;
  /** Runs one SELECT in a READ ONLY transaction. */
  readOnly: (sql: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>;
}

/** The column a key scan answers its row hash in (a name no table column is likely to have). */
const HASH = 'rowbridge_row_hash';

/** The incremental reads of one table. */
export function createSqlTableScans(d: ScanDialect): TableScans {
  const { quote, placeholder, keyColumn } = d;
  const key = quote(keyColumn);
  const from = quote(d.table);
  const select = (columns: readonly string[]) => [...new Set([keyColumn, ...columns])].map(quote);
  const hashOf = (columns: readonly string[]) => {
    const list = columns.map((c) => `t.${quote(c)}`).join(', ');
    return d.kind === 'postgres'
      ? `left(md5(ROW(${list})::text), 16) AS ${HASH}`
      : `LEFT(MD5(JSON_ARRAY(${list})), 16) AS ${HASH}`;
  };

  /** A row read, its hash (when asked for) taken out of its values. */
  const scanned = (row: Record<string, unknown>): ScannedRecord => {
    const hash = row[HASH];
    delete row[HASH];
    return { key: String(row[keyColumn]), values: row, ...(typeof hash === 'string' ? { hash } : {}) };
  };

  /** Every page of `SELECT list FROM t WHERE where ORDER BY key`, `params` before the page's own. */
  async function paged(
    list: readonly string[],
    where: string | undefined,
    params: unknown[],
    each: (row: Record<string, unknown>) => void,
  ): Promise<void> {
    let last: unknown;
    for (;;) {
      const conditions = [
        ...(where === undefined ? [] : [where]),
        ...(last === undefined ? [] : [`t.${key} > ${placeholder(params.length + 1)}`]),
      ];
      const page = await d.readOnly(
        `SELECT ${list.join(', ')} FROM ${from} t${conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`} ORDER BY t.${key} LIMIT ${PAGE}`,
        last === undefined ? params : [...params, last],
      );
      for (const row of page) each(row);
      if (page.length < PAGE) return;
      last = page.at(-1)![keyColumn];
    }
  }

  return {
    clock: () => (d.kind === 'postgres' ? postgresClock(d) : mysqlClock(d)),
    async scanKeys(columns, hashColumns, each) {
      const list = select(columns).map((c) => `t.${c}`);
      if (hashColumns !== undefined) list.push(hashOf(hashColumns));
      await paged(list, undefined, [], (row) => each(scanned(row)));
    },
    async readChanged(columns, since) {
      // A zone-less column holds wall clocks (of options.timezone); a MySQL TIMESTAMP is
      // read in the session's UTC; a PostgreSQL timestamptz takes an ISO instant to the
      // millisecond. A wall clock is whole seconds: the bound is rounded up, which skips
      // nothing (read-sides.ts: the cursor lies at or before the last reads' start, minus a
      // margin, and at or after every time those reads saw).
      const up = Math.ceil(since.ms / 1000) * 1000;
      const value =
        since.wallClock !== undefined
          ? since.wallClock.formatDateTime(up)
          : d.kind === 'postgres'
            ? new Date(since.ms).toISOString()
            : UTC.formatDateTime(up);
      const out: TableRecord[] = [];
      await paged(
        select(columns).map((c) => `t.${c}`),
        // A record without an update time cannot be placed after the cursor: read every run.
        `(t.${quote(since.column)} >= ${placeholder(1)} OR t.${quote(since.column)} IS NULL)`,
        [value],
        (row) => out.push({ key: String(row[keyColumn]), values: row }),
      );
      return out;
    },
    async readKeys(columns, keys, hashColumns) {
      const list = select(columns).map((c) => `t.${c}`);
      if (hashColumns !== undefined) list.push(hashOf(hashColumns));
      const out: ScannedRecord[] = [];
      for (let i = 0; i < keys.length; i += KEYS_PER_QUERY) {
        const part = keys.slice(i, i + KEYS_PER_QUERY);
        const rows = await d.readOnly(
          `SELECT ${list.join(', ')} FROM ${from} t WHERE t.${key} IN (${part.map((_, j) => placeholder(j + 1)).join(', ')})`,
          part,
        );
        for (const row of rows) {
          out.push(scanned(row));
        }
      }
      return out;
    },
  };
}

/** A number a database answered as text or number; undefined for null. */
function msOf(value: unknown): number | undefined {
  if (value === null || value === undefined) return undefined;
  const ms = Number(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/** `clock_timestamp()`, or the start of the oldest transaction of this database holding a transaction id. */
async function postgresClock(d: ScanDialect): Promise<number | undefined> {
  // Only transactions that have written this table: an INSERT, UPDATE or DELETE holds its
  // RowExclusiveLock (or a stronger one) until the transaction ends. Transactions busy with
  // other tables do not hold this table's cursor back.
  const [row] = await d.readOnly(
    `SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint::text AS now,
            (SELECT floor(extract(epoch FROM min(a.xact_start)) * 1000)::bigint::text
               FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
              WHERE l.locktype = 'relation' AND l.relation = to_regclass(${d.placeholder(1)})
                AND l.mode IN ('RowExclusiveLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock')
                AND a.backend_xid IS NOT NULL) AS oldest`,
    [d.quote(d.table)],
  );
  return earliest(msOf(row?.now), msOf(row?.oldest));
}

/** `NOW(6)`, or the start of the oldest InnoDB transaction that modified rows, when the login may see them. */
async function mysqlClock(d: ScanDialect): Promise<number | undefined> {
  const [row] = await d.readOnly('SELECT UNIX_TIMESTAMP(NOW(6)) * 1000 AS now', []);
  // INNODB_TRX needs PROCESS: without it the margin alone covers a transaction in progress.
  const oldest = await d
    .readOnly(
      'SELECT UNIX_TIMESTAMP(MIN(trx_started)) * 1000 AS oldest FROM information_schema.INNODB_TRX WHERE trx_rows_modified > 0',
      [],
    )
    .then(([r]) => msOf(r?.oldest))
    .catch(() => undefined);
  const now = msOf(row?.now);
  return earliest(now === undefined ? undefined : Math.floor(now), oldest);
}

function earliest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}
