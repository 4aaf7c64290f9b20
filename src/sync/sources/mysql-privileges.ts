/**
 * What a mysql source's account may do beyond reading. A READ ONLY transaction stops
 * table writes only: with FILE a SELECT reads server files (`LOAD_FILE`) and writes them
 * (`INTO OUTFILE`), and write or admin grants are one wrapper escape away from use. The
 * account's grants are read with SHOW GRANTS (MariaDB adds the enabled role's), and the
 * grants of every role it holds, since a role's privileges are a `SET ROLE` away.
 */
import type { Connection } from 'mysql2/promise';

// Everything else (FILE, INSERT, ALL PRIVILEGES, SUPER, GRANT OPTION, MySQL 8's dynamic
// *_ADMIN privileges, ...) is refused: a list of what is harmless ages better than a
// list of what is not, as servers add privileges.
const READ_PRIVILEGES = new Set([
  'USAGE',
  'SELECT',
  'SHOW VIEW',
  'SHOW DATABASES',
  'EXECUTE',
  'PROCESS',
  'LOCK TABLES',
  'CREATE TEMPORARY TABLES',
  'REPLICATION CLIENT',
  'BINLOG MONITOR',
  'SLAVE MONITOR',
  'REPLICA MONITOR',
]);

/** What a two-way job's login must do on its one table (and may, without being privileged). */
const TABLE_WRITES = new Set(['INSERT', 'UPDATE', 'DELETE']);

/**
 * Reasons the connected account is privileged (empty: it is not), e.g. "holds FILE, INSERT".
 * `writable`: a two-way job's table, on which INSERT, UPDATE and DELETE granted for that
 * table alone are expected rather than privileged.
 */
export async function mysqlPrivileges(
  conn: Connection,
  writable?: { schema?: string | undefined; table: string },
): Promise<string[]> {
  let writableAs: string | undefined;
  if (writable !== undefined) {
    const [db] = await conn.query('SELECT DATABASE() AS db');
    writableAs = `${writable.schema ?? (db as Array<{ db?: string }>)[0]?.db ?? ''}.${writable.table}`;
  }
  const [who] = await conn.query('SELECT CURRENT_USER() AS account');
  const account = (who as Array<{ account?: string }>)[0]?.account ?? 'the account';
  const found = new Set<string>();
  const unreadable: string[] = [];
  const seen = new Set<string>();
  const pending = ['SHOW GRANTS'];
  while (pending.length > 0 && seen.size < 50) {
    const statement = pending.shift() ?? '';
    if (seen.has(statement)) continue;
    seen.add(statement);
    let rows: unknown;
    try {
      [rows] = await conn.query(statement);
    } catch {
      unreadable.push(statement.replace('SHOW GRANTS FOR ', ''));
      continue;
    }
    for (const row of rows as Array<Record<string, unknown>>) {
      const first = Object.values(row)[0];
      const line = typeof first === 'string' ? first : '';
      const grant = /^GRANT (.+?) ON (.+?) TO /s.exec(line);
      if (grant !== null) {
        const onTable = writableAs !== undefined && grant[2]?.replaceAll('`', '') === writableAs;
        for (const privilege of privilegeNames(grant[1] ?? ''))
          if (!READ_PRIVILEGES.has(privilege) && !(onTable && TABLE_WRITES.has(privilege)))
            found.add(privilege);
        if (/ WITH GRANT OPTION/.test(line)) found.add('GRANT OPTION');
        continue;
      }
      // `GRANT role1, role2 TO user`: the names come quoted by the server itself.
      const roles = /^GRANT (.+?) TO /s.exec(line)?.[1];
      for (const role of roles?.split(/,\s*(?=`)/) ?? []) pending.push(`SHOW GRANTS FOR ${role.trim()}`);
    }
  }
  const reasons = found.size === 0 ? [] : [`account ${account} holds ${[...found].join(', ')}`];
  if (unreadable.length > 0)
    reasons.push(`the grants of its role ${unreadable.join(', ')} cannot be read to check them`);
  return reasons;
}

/** `SELECT, INSERT (\`a\`, \`b\`), SHOW VIEW` → SELECT, INSERT, SHOW VIEW. */
function privilegeNames(list: string): string[] {
  return list
    .replace(/\([^)]*\)/g, '')
    .split(',')
    .map((name) => name.trim().toUpperCase().replace(/\s+/g, ' '))
    .filter((name) => name !== '');
}
