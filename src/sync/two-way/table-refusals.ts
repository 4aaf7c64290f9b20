/**
 * Which database errors refuse one record of a two-way table write, and how such a refusal
 * reads for a person. A refusal is an error about the record's data: PostgreSQL SQLSTATE
 * class 22 (data exception: a value too long, a bad number, a bad date) or 23 (integrity
 * constraint: unique, NOT NULL, CHECK, foreign key, exclusion); MySQL/MariaDB the same
 * SQLSTATE classes and the errors strict mode raises under HY000 (a CHECK, a field with no
 * default, a wrong value for a field). Anything else (a lost connection, a denied right, a
 * serialization failure or deadlock, a read-only database, a statement timeout) is about
 * the run, not a record, and fails the batch as before.
 *
 * The text names the constraint and the column when the driver reports them, else the
 * column whose value breaks the column's type (PostgreSQL does not name the column of a
 * value too long), and what is allowed; the database's code ends it.
 */
import type { RefusedWrite } from './table-side-types.ts';

/** Runs one statement on the batch's connection (sql-table-side.ts's RunSql, not imported: it imports this). */
export type Statement = (sql: string, params?: unknown[]) => Promise<Array<Record<string, unknown>>>;

/** MySQL/MariaDB errors (errno) about a record's data, whatever SQLSTATE they answer (HY000 for some). */
const MYSQL_REFUSALS = new Set([
  1048, 1062, 1169, 1216, 1217, 1263, 1264, 1265, 1292, 1364, 1365, 1366, 1406, 1451, 1452, 1586, 3140, 3819,
  4025,
]);

/** MySQL/MariaDB errors about a value's form or size (too long, out of range, not of the type). */
const DATA_ERRNOS = new Set(['1263', '1264', '1265', '1292', '1365', '1366', '1406', '3140']);

const PG_NAMES: Readonly<Record<string, string>> = {
  '22001': 'string_data_right_truncation',
  '22003': 'numeric_value_out_of_range',
  '22007': 'invalid_datetime_format',
  '22008': 'datetime_field_overflow',
  '22012': 'division_by_zero',
  '22P02': 'invalid_text_representation',
  '23502': 'not_null_violation',
  '23503': 'foreign_key_violation',
  '23505': 'unique_violation',
  '23514': 'check_violation',
  '23P01': 'exclusion_violation',
};

/** What a refused statement wrote: its kind, its values, and the records (refs) it was for. */
export interface RefusedUnit {
  kind: 'update' | 'insert' | 'delete';
  refs: readonly string[];
  values: Readonly<Record<string, unknown>>;
}

/** The database error fields both drivers may carry (pg: code, column...; mysql2: errno, sqlState). */
interface DbError {
  message?: string;
  code?: string;
  errno?: number;
  sqlState?: string;
  sqlMessage?: string;
  column?: string;
  constraint?: string;
  detail?: string;
}

interface ColumnFacts {
  type: string;
  length: number | undefined;
  precision: number | undefined;
  scale: number | undefined;
}

/** What the table side passes: the database, the table, and the write connection (inside the batch's transaction). */
export interface RefusalDeps {
  kind: 'postgres' | 'mysql';
  table: string;
  write: Statement;
  quote: (name: string) => string;
}

/** Tells a record's refusal from a failure of the run, and words it. */
export interface TableRefusals {
  /** Whether `err` refuses the record(s) of the statement that raised it, not the run. */
  isRefusal(err: unknown): boolean;
  /** The refusal of `unit`'s first record; may read the table's columns and constraints. */
  explain(err: unknown, unit: RefusedUnit): Promise<RefusedWrite>;
}

/** Refusals of `d.table`'s writes; its column facts are read once, on the first refusal that needs them. */
export function createTableRefusals(d: RefusalDeps): TableRefusals {
  const pg = d.kind === 'postgres';
  const [schema, name] = d.table.includes('.') ? (d.table.split('.') as [string, string]) : [null, d.table];
  let facts: Promise<Map<string, ColumnFacts>> | undefined;
  const p = (n: number) => (pg ? `$${n}` : '?');

  /** Reads in the batch's transaction (after its rollback to the savepoint); a failure only loses detail. */
  async function ask(sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>> {
    await d.write('SAVEPOINT rowbridge_explain');
    try {
      const rows = await d.write(sql, params);
      await d.write('RELEASE SAVEPOINT rowbridge_explain');
      return rows;
    } catch {
      await d.write('ROLLBACK TO SAVEPOINT rowbridge_explain');
      await d.write('RELEASE SAVEPOINT rowbridge_explain');
      return [];
    }
  }

  function columnFacts(): Promise<Map<string, ColumnFacts>> {
    facts ??= ask(
      `SELECT column_name AS name, data_type AS type, character_maximum_length AS len,
              numeric_precision AS p, numeric_scale AS s
         FROM information_schema.columns
        WHERE table_schema = COALESCE(${p(1)}, ${pg ? 'current_schema()' : 'DATABASE()'}) AND table_name = ${p(2)}`,
      [schema, name],
    ).then(
      (rows) =>
        new Map(
          rows.map((r) => [
            text(r.name) ?? '',
            { type: text(r.type) ?? '', length: num(r.len), precision: num(r.p), scale: num(r.s) },
          ]),
        ),
    );
    return facts;
  }

  /** The check's definition and (PostgreSQL) its columns. */
  async function checkOf(constraint: string): Promise<{ def?: string; columns?: string }> {
    const rows = pg
      ? await ask(
          `SELECT pg_get_constraintdef(c.oid) AS def,
                  (SELECT string_agg(a.attname, ', ') FROM pg_attribute a
                    WHERE a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)) AS cols
             FROM pg_constraint c WHERE c.conrelid = $1::regclass AND c.conname = $2`,
          [d.quote(d.table), constraint],
        )
      : await ask(
          `SELECT CHECK_CLAUSE AS def FROM information_schema.CHECK_CONSTRAINTS
            WHERE CONSTRAINT_SCHEMA = COALESCE(?, DATABASE()) AND CONSTRAINT_NAME = ?`,
          [schema, constraint],
        );
    const row = rows[0];
    const def = text(row?.def);
    const columns = text(row?.cols);
    return {
      ...(def === undefined ? {} : { def: pg ? def : `CHECK (${def})` }),
      ...(columns === undefined ? {} : { columns }),
    };
  }

  /** The columns of a MySQL index (`for key 'email'`, MySQL 8: `'t.email'`). */
  async function indexColumns(key: string): Promise<string | undefined> {
    const rows = await ask(
      `SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX SEPARATOR ', ') AS cols FROM information_schema.STATISTICS
        WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? AND INDEX_NAME = ?`,
      [schema, name, key.slice(key.lastIndexOf('.') + 1)],
    );
    return text(rows[0]?.cols);
  }

  /** The written column whose value breaks its type: too long, too big, or not of the type. */
  async function brokenColumn(
    state: string,
    message: string,
    unit: RefusedUnit,
  ): Promise<string | undefined> {
    const cols = await columnFacts();
    const written = Object.entries(unit.values).filter(([, v]) => v !== null && v !== undefined);
    const quoted = /: "(.*)"$/s.exec(message)?.[1];
    const found = written.find(([col, v]) => {
      const f = cols.get(col);
      if (f === undefined) return false;
      if (state === '22001') return f.length !== undefined && (text(v) ?? '').length > f.length;
      if (state === '22003') return f.precision !== undefined && f.scale !== undefined && !fits(v, f);
      return quoted !== undefined && text(v) === quoted;
    });
    return found?.[0];
  }

  /** What the column allows, from its type. */
  async function allowedBy(column: string | undefined, state: string): Promise<string | undefined> {
    if (column === undefined) return undefined;
    const f = (await columnFacts()).get(column);
    if (f === undefined) return undefined;
    if (f.length !== undefined && state === '22001')
      return `at most ${f.length} characters (${f.type}(${f.length}))`;
    if (f.precision !== undefined && f.scale !== undefined && /numeric|decimal/i.test(f.type))
      return `at most ${f.precision - f.scale} digits before the point and ${f.scale} after (${f.type}(${f.precision},${f.scale}))`;
    return `a value of type ${f.type}`;
  }

  return {
    isRefusal(err) {
      const e = (err ?? {}) as DbError;
      if (pg) return typeof e.code === 'string' && /^2[23][0-9A-Z]{3}$/.test(e.code);
      return (
        (typeof e.errno === 'number' && MYSQL_REFUSALS.has(e.errno)) ||
        (typeof e.sqlState === 'string' && /^2[23]/.test(e.sqlState))
      );
    },
    async explain(err, unit) {
      const e = (err ?? {}) as DbError;
      const message = (e.sqlMessage ?? e.message ?? String(err)).trim();
      const state = e.sqlState ?? e.code ?? '';
      const keyCols = /^Key \(([^)]*)\)=/.exec(e.detail ?? '')?.[1];
      let field = e.column ?? keyCols ?? mysqlColumn(message);
      let allowed: string | undefined;
      const constraint =
        e.constraint ??
        // MariaDB names a column's check `table.column`; information_schema names it `column`.
        /CONSTRAINT `(?:[^`]*\.)?([^`.]+)` failed|constraint '([^']+)' is violated/i
          .exec(message)
          ?.slice(1)
          .find(Boolean);
      const kind = pg ? state : String(e.errno ?? '');
      if (unit.kind === 'delete' && ['23503', '1451', '1217'].includes(kind)) {
        allowed = 'no record of another table referencing it (delete or re-point those first)';
      } else if (['23505', '1062', '1586', '1169'].includes(kind)) {
        const dupKey = /for key '([^']+)'/.exec(message)?.[1];
        field ??= dupKey === undefined ? undefined : await indexColumns(dupKey);
        allowed = `a value of ${field ?? 'the key'} no other record of the table holds`;
      } else if (['23502', '1048', '1364'].includes(kind)) {
        allowed = `a value: ${field ?? 'the column'} may not be empty (NOT NULL)`;
      } else if (['23514', '3819', '4025'].includes(kind) && constraint !== undefined) {
        const check = await checkOf(constraint);
        field ??= check.columns ?? (constraint in unit.values ? constraint : undefined);
        allowed =
          check.def === undefined
            ? `values the check ${constraint} accepts`
            : `values satisfying ${check.def}`;
      } else if (['23503', '1452', '1216'].includes(kind)) {
        field ??= /FOREIGN KEY \(`([^)]+)`\)/.exec(message)?.[1]?.replaceAll('`', '');
        const to =
          /in table "([^"]+)"/.exec(e.detail ?? '')?.[1] ?? /REFERENCES `([^`]+)`/.exec(message)?.[1];
        allowed = `a value of ${field ?? 'the key'} present in ${to ?? 'the referenced table'}`;
      } else if (/^22/.test(state) || DATA_ERRNOS.has(kind)) {
        const asPg = pg ? state : mysqlState(kind);
        field ??= await brokenColumn(asPg, message, unit);
        allowed = await allowedBy(field, asPg);
      }
      const parts = [
        message,
        // "Failing row contains (...)" would copy columns the job does not sync into the dead letter.
        e.detail?.startsWith('Failing row') === true ? undefined : e.detail?.replace(/\.$/, ''),
        constraint === undefined || message.includes(constraint) ? undefined : `constraint ${constraint}`,
        allowed === undefined ? undefined : `allowed: ${allowed}`,
      ].filter((s): s is string => s !== undefined && s !== '');
      const code = pg
        ? `SQLSTATE ${state}${PG_NAMES[state] === undefined ? '' : ` ${PG_NAMES[state]}`}`
        : `MySQL error ${e.errno ?? '?'}${nameOf(e)}${e.sqlState === undefined ? '' : `, SQLSTATE ${e.sqlState}`}`;
      return {
        ref: unit.refs[0]!,
        ...(field === undefined || unit.kind === 'delete' ? {} : { field }),
        ...(!pg && typeof e.errno === 'number' ? { errorCode: e.errno } : {}),
        reason: `${unit.kind} refused by the database: ${parts.join('; ')} (${code})`,
      };
    },
  };
}

/** The column a MySQL message names (`for column 'x'`, `` column `db`.`t`.`x` ``, `Column 'x' cannot be null`, `Field 'x'`). */
function mysqlColumn(message: string): string | undefined {
  const m = /(?:column|field) (?:'([^']+)'|`[^`]*`\.`[^`]*`\.`([^`]+)`|`([^`]+)`)/i.exec(message);
  return m?.slice(1).find(Boolean);
}

/**
 * mysql2's name of the errno, from MySQL's list: MySQL and MariaDB number alike only up to
 * the 1700s (MariaDB's 4025, a failed CHECK, is another error in MySQL's list).
 */
function nameOf(e: DbError): string {
  return e.code === undefined || e.errno === undefined || e.errno >= 1700 ? '' : ` ${e.code}`;
}

/** The PostgreSQL state a MySQL data error amounts to, for {@link brokenColumn}'s test. */
function mysqlState(errno: string): string {
  return errno === '1406' ? '22001' : errno === '1264' ? '22003' : '22P02';
}

function fits(value: unknown, f: ColumnFacts): boolean {
  const n = Math.abs(Number(value));
  return !Number.isFinite(n) || n < 10 ** (f.precision! - f.scale!);
}

function num(value: unknown): number | undefined {
  if (value === null || value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** A value a database answered as text (a string, a number, or bytes); undefined otherwise. */
function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return Buffer.isBuffer(value) ? value.toString('utf8') : undefined;
}
