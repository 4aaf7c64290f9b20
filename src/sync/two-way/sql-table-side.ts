/**
 * The part of a two-way table side that is the same SQL on PostgreSQL and MySQL/MariaDB:
 * keyset-paged reads in READ ONLY transactions, and one transaction per batch of
 * updates, inserts and deletes. A record the database refuses (a unique or CHECK
 * violation, a value too long: table-refusals.ts) is left out of the batch under a
 * savepoint and answered as refused, the others committed (isolate-refused-rows.ts); any
 * other failure rolls the batch back whole and is thrown. Each database's side
 * (table-side.ts, mysql-table-side.ts) opens its connections and passes in only what
 * differs: quoting, placeholders, transaction statements, and how an insert answers its key.
 */
import type { SourceError } from '../sources/source-error.ts';
import { writeIsolatingRefusals } from './isolate-refused-rows.ts';
import type { WriteUnit } from './isolate-refused-rows.ts';
import { createSqlTableScans } from './sql-table-scans.ts';
import { createTableRefusals } from './table-refusals.ts';
import type { ColumnInfo, TableRecord, TableSide } from './table-side-types.ts';

const PAGE = 5000;
const DELETE_CHUNK = 500;

/** Runs one statement on one connection; answers the rows it returned. */
export type RunSql = (sql: string, params?: unknown[]) => Promise<Array<Record<string, unknown>>>;

/** What one database's table side passes to {@link createSqlTableSide}. */
export interface SqlTableDialect {
  kind: 'postgres' | 'mysql';
  table: string;
  keyColumn: string;
  columns: ReadonlyMap<string, ColumnInfo>;
  /** Quotes an identifier, `schema.table` included. */
  quote: (name: string) => string;
  /** The placeholder of the `n`th parameter of a statement (from 1). */
  placeholder: (n: number) => string;
  /** Statements on the read connection, and on the write connection. */
  read: RunSql;
  write: RunSql;
  /** Opens a READ ONLY transaction on the read connection, and a transaction on the write one. */
  beginRead: string;
  beginWrite: string;
  /** Run first inside every transaction: PostgreSQL limits statement time per transaction. */
  limitTime?: (run: RunSql) => Promise<void>;
  /** Runs a built INSERT (columns and values given) and answers the new record's key. */
  insert(sql: string, params: unknown[], values: Record<string, unknown>): Promise<string>;
  fail: (err: unknown, what: string) => SourceError;
  close: () => Promise<void>;
}

/** A table side reading and writing through the given dialect's two connections. */
export function createSqlTableSide(d: SqlTableDialect): TableSide {
  const { table, keyColumn, quote, placeholder } = d;

  async function readOnly(sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>> {
    await d.read(d.beginRead);
    try {
      await d.limitTime?.(d.read);
      const rows = await d.read(sql, params);
      await d.read('COMMIT');
      return rows;
    } catch (err) {
      await d.read('ROLLBACK').catch(() => undefined);
      throw d.fail(err, 'read failed');
    }
  }

  const refusals = createTableRefusals(d);

  /** One DELETE of `keys`; refused, it halves until the refused record stands alone. */
  function deleteOf(keys: readonly string[]): WriteUnit {
    const sql = `DELETE FROM ${quote(table)} WHERE ${quote(keyColumn)} IN (${keys.map((_, j) => placeholder(j + 1)).join(', ')})`;
    const half = Math.ceil(keys.length / 2);
    return {
      kind: 'delete',
      refs: keys,
      values: {},
      run: async () => void (await d.write(sql, [...keys])),
      split: () => [deleteOf(keys.slice(0, half)), deleteOf(keys.slice(half))],
    };
  }

  return {
    columns: d.columns,
    async readAll(wanted) {
      const list = [...new Set([keyColumn, ...wanted])].map(quote).join(', ');
      const out: TableRecord[] = [];
      let last: unknown;
      for (;;) {
        const page = await readOnly(
          `SELECT ${list} FROM ${quote(table)}${last === undefined ? '' : ` WHERE ${quote(keyColumn)} > ${placeholder(1)}`} ORDER BY ${quote(keyColumn)} LIMIT ${PAGE}`,
          last === undefined ? [] : [last],
        );
        for (const row of page) out.push({ key: String(row[keyColumn]), values: row });
        if (page.length < PAGE) return out;
        last = page.at(-1)![keyColumn];
      }
    },
    async write(batch) {
      const units: WriteUnit[] = [];
      for (const u of batch.updates) {
        const cols = Object.keys(u.set);
        if (cols.length === 0) continue;
        const sql = `UPDATE ${quote(table)} SET ${cols.map((c, i) => `${quote(c)} = ${placeholder(i + 1)}`).join(', ')} WHERE ${quote(keyColumn)} = ${placeholder(cols.length + 1)}`;
        const params = [...cols.map((c) => u.set[c]), u.key];
        units.push({
          kind: 'update',
          refs: [u.key],
          values: u.set,
          run: async () => void (await d.write(sql, params)),
        });
      }
      for (const ins of batch.inserts) {
        const cols = Object.keys(ins.values);
        const sql = `INSERT INTO ${quote(table)} (${cols.map(quote).join(', ')}) VALUES (${cols.map((_, i) => placeholder(i + 1)).join(', ')})`;
        const params = cols.map((c) => ins.values[c]);
        units.push({
          kind: 'insert',
          refs: [ins.ref],
          values: ins.values,
          run: async (created) => void created.set(ins.ref, await d.insert(sql, params, ins.values)),
        });
      }
      for (let i = 0; i < batch.deletes.length; i += DELETE_CHUNK)
        units.push(deleteOf(batch.deletes.slice(i, i + DELETE_CHUNK)));
      try {
        await d.write(d.beginWrite);
        await d.limitTime?.(d.write);
        const written = await writeIsolatingRefusals(units, d.write, refusals);
        await d.write('COMMIT');
        return written;
      } catch (err) {
        await d.write('ROLLBACK').catch(() => undefined);
        throw d.fail(err, 'write failed (the batch was rolled back)');
      }
    },
    close: d.close,
    scans: createSqlTableScans({ ...d, readOnly }),
  };
}
