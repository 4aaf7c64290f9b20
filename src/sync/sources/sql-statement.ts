/**
 * Whether a source query is one statement that stays inside the subquery rowbridge wraps
 * it in. The query is sent with parameters (the extended protocol, or mysql2 without
 * multi-statement support), so a `…; DROP TABLE …` fails at the server anyway; this check
 * says so before a connection opens, naming the field. It reads the text the way each
 * server's lexer does, so a `;` inside a string is no second statement and a `;` the
 * server would run is never taken for a quoted one:
 * - both: single and double quotes, `--` and block comments, parentheses;
 * - Postgres: backslash escapes only in `E'…'` strings, dollar quotes `$tag$…$tag$`
 *   (but `$` inside an identifier such as `a$b$` is part of the name), nested block
 *   comments;
 * - MySQL/MariaDB: backslash escapes in both quotes (the source session turns
 *   NO_BACKSLASH_ESCAPES off), backticks, `#`, `--` only before a blank or control
 *   character (`1--1` is one minus minus one), and `/*! … *\/` (`/*M! … *\/`) executable
 *   comments, whose body the server runs.
 * A query that ends inside a string or comment, or that closes a parenthesis it did not
 * open, would take in or escape the text rowbridge adds after it, so it is refused too.
 */

type Dialect = 'postgres' | 'mysql';

interface Scan {
  /** Index of the first top-level `;`, or the length of the text. */
  end: number;
  /** Text after that `;` which is more than blanks, comments and semicolons. */
  second?: string;
  /** What the text ends inside of, unclosed. */
  open?: string;
  /** Closes a parenthesis it did not open, or leaves one open. */
  parentheses?: 'closes' | 'leaves';
}

/** The text after the first statement's `;` that is more than blanks and comments, or undefined. */
export function secondStatement(sql: string, dialect: Dialect): string | undefined {
  return scan(sql, dialect).second;
}

/** The query up to its first top-level `;` (a trailing `;` would end the wrapping statement early). */
export function firstStatement(sql: string, dialect: Dialect): string {
  return sql.slice(0, scan(sql, dialect).end);
}

/**
 * Why the query cannot be wrapped as a subquery (to follow "source.query must be one
 * SELECT statement; "), or undefined when it can.
 */
export function statementProblem(sql: string, dialect: Dialect): string | undefined {
  const found = scan(sql, dialect);
  if (found.second !== undefined) return `it goes on after a ";" with "${found.second.slice(0, 40)}"`;
  if (found.open !== undefined) return `it ends inside ${found.open}`;
  if (found.parentheses === 'closes') return 'it closes a parenthesis it did not open';
  if (found.parentheses === 'leaves') return 'it leaves a parenthesis open';
  return undefined;
}

const IDENT = /[A-Za-z0-9_\u0080-\uffff]/;
const DOLLAR_TAG = /^\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/;

function scan(sql: string, dialect: Dialect): Scan {
  const mysql = dialect === 'mysql';
  let i = 0;
  let depth = 0;
  let closesUnopened = false;
  let semicolon: number | undefined;
  // Inside a MySQL executable comment: its body is code, and the next `*/` ends it.
  let executable = false;
  const done = (open?: string): Scan => ({
    end: semicolon ?? sql.length,
    ...(open === undefined ? {} : { open }),
    ...(closesUnopened
      ? { parentheses: 'closes' as const }
      : depth > 0
        ? { parentheses: 'leaves' as const }
        : {}),
  });
  while (i < sql.length) {
    const c = sql[i] ?? '';
    const next = sql[i + 1];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '-' && next === '-' && (!mysql || startsMysqlDashComment(sql[i + 2]))) {
      i = lineEnd(sql, i);
      continue;
    }
    if (mysql && c === '#') {
      i = lineEnd(sql, i);
      continue;
    }
    if (c === '/' && next === '*') {
      const opener = mysql && !executable ? /^\/\*M?!\d*/.exec(sql.slice(i))?.[0] : undefined;
      if (opener !== undefined) {
        executable = true;
        i += opener.length;
        continue;
      }
      const end = mysql ? flatCommentEnd(sql, i) : nestedCommentEnd(sql, i);
      if (end < 0) return done('a /* comment');
      i = end;
      continue;
    }
    if (executable && c === '*' && next === '/') {
      executable = false;
      i += 2;
      continue;
    }
    if (c === ';') {
      semicolon ??= i;
      i++;
      continue;
    }
    // Anything else is code: after a `;` it is a second statement.
    if (semicolon !== undefined) return { ...done(), second: sql.slice(semicolon + 1).trim() };
    if (c === "'" || c === '"' || (mysql && c === '`')) {
      const end = closing(sql, i + 1, c, mysql && c !== '`');
      if (end < 0) return done(c === '`' || (!mysql && c === '"') ? 'a quoted identifier' : 'a string');
      i = end;
    } else if (IDENT.test(c) || (mysql && c === '$')) {
      const start = i;
      // In Postgres `$` continues a name (`a$b$`) but never a number (`1$x$…` is a dollar quote).
      const dollarContinues = mysql || !/[0-9]/.test(c);
      i++;
      while (i < sql.length && (IDENT.test(sql[i] ?? '') || (dollarContinues && sql[i] === '$'))) i++;
      if (!mysql && i - start === 1 && (c === 'e' || c === 'E') && sql[i] === "'") {
        const end = closing(sql, i + 1, "'", true);
        if (end < 0) return done('a string');
        i = end;
      }
    } else if (!mysql && c === '$') {
      const tag = DOLLAR_TAG.exec(sql.slice(i))?.[0];
      if (tag === undefined) {
        i++;
      } else {
        const end = sql.indexOf(tag, i + tag.length);
        if (end < 0) return done('a dollar-quoted string');
        i = end + tag.length;
      }
    } else {
      if (c === '(') depth++;
      else if (c === ')' && --depth < 0) closesUnopened = true;
      i++;
    }
  }
  return done(executable ? 'a /*! comment' : undefined);
}

/** Index past the closing quote, or -1; a doubled quote (or an escaped one) does not close. */
function closing(sql: string, from: number, quote: string, backslashEscapes: boolean): number {
  let i = from;
  while (i < sql.length) {
    if (backslashEscapes && sql[i] === '\\') i += 2;
    else if (sql[i] === quote && sql[i + 1] === quote) i += 2;
    else if (sql[i] === quote) return i + 1;
    else i++;
  }
  return -1;
}

/** MySQL reads `--` as a comment only before a blank or control character (or at the end). */
function startsMysqlDashComment(after: string | undefined): boolean {
  return after === undefined || after.charCodeAt(0) <= 0x20;
}

function lineEnd(sql: string, from: number): number {
  const end = sql.indexOf('\n', from);
  return end < 0 ? sql.length : end + 1;
}

/** MySQL block comments do not nest. */
function flatCommentEnd(sql: string, from: number): number {
  const end = sql.indexOf('*/', from + 2);
  return end < 0 ? -1 : end + 2;
}

/** Postgres block comments nest: `/* a /* b *\/ c *\/` is one comment. */
function nestedCommentEnd(sql: string, from: number): number {
  let level = 0;
  let i = from;
  while (i < sql.length) {
    if (sql[i] === '/' && sql[i + 1] === '*') {
      level++;
      i += 2;
    } else if (sql[i] === '*' && sql[i + 1] === '/') {
      level--;
      i += 2;
      if (level === 0) return i;
    } else {
      i++;
    }
  }
  return -1;
}
