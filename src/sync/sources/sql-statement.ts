/**
 * Whether a source query is one statement. A job's `query:` is wrapped as a subquery and
 * sent with parameters (the extended protocol, one statement per message), so a
 * `…; DROP TABLE …` fails at the server anyway; this check says so before a connection
 * opens, naming the field. It reads past quotes and comments the way both databases do
 * (single quotes, double quotes, MySQL backticks, Postgres dollar quotes, `--`, `#`
 * (MySQL) and block comments), so a `;` inside a string is no second statement.
 */

/** The text after the first statement's `;` that is more than blanks and comments, or undefined. */
export function secondStatement(sql: string, dialect: 'postgres' | 'mysql'): string | undefined {
  const mysql = dialect === 'mysql';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    const next = sql[i + 1];
    if (c === "'" || c === '"' || (mysql && c === '`')) {
      // Postgres reads a backslash as an escape only in E'...' strings.
      const escapes = mysql ? c !== '`' : c === "'" && /[eE]$/.test(sql.slice(0, i));
      i = closing(sql, i + 1, c, escapes);
    } else if ((c === '-' && next === '-') || (mysql && c === '#')) {
      i = lineEnd(sql, i);
    } else if (c === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (!mysql && c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i))?.[0];
      const end = tag === undefined ? -1 : sql.indexOf(tag, i + tag.length);
      i = tag === undefined ? i + 1 : end < 0 ? sql.length : end + tag.length;
    } else if (c === ';') {
      const rest = sql.slice(i + 1);
      return stripComments(rest, mysql).replace(/;/g, '').trim() === '' ? undefined : rest.trim();
    } else {
      i++;
    }
  }
  return undefined;
}

/** Index past the closing quote; a doubled quote (or an escaped one) does not close. */
function closing(sql: string, from: number, quote: string, backslashEscapes: boolean): number {
  let i = from;
  while (i < sql.length) {
    if (backslashEscapes && sql[i] === '\\') i += 2;
    else if (sql[i] === quote && sql[i + 1] === quote) i += 2;
    else if (sql[i] === quote) return i + 1;
    else i++;
  }
  return i;
}

function lineEnd(sql: string, from: number): number {
  const end = sql.indexOf('\n', from);
  return end < 0 ? sql.length : end + 1;
}

function stripComments(text: string, mysql: boolean): string {
  return text.replace(/\/\*[\s\S]*?(\*\/|$)/g, ' ').replace(mysql ? /(--|#)[^\n]*/g : /--[^\n]*/g, ' ');
}
