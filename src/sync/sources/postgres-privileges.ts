/**
 * What a postgres source's role may do beyond reading. A READ ONLY transaction stops
 * writes to this database only: a superuser still reads server files (`pg_read_file`),
 * runs programs (`COPY … TO PROGRAM` through dblink, whose second connection is no READ
 * ONLY transaction) and ends other sessions, and so do members of the predefined roles
 * below. Membership counts, inherited or not: `set_config('role', …)` in a SELECT takes
 * on any role the login is a member of.
 */
import type pg from 'pg';

const SERVER_ROLES = [
  'pg_read_server_files',
  'pg_write_server_files',
  'pg_execute_server_program',
  'pg_signal_backend',
];

/** Reasons the connected role is privileged (empty: it is not), e.g. "is a superuser". */
export async function postgresPrivileges(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ login: string; rolname: string; rolsuper: boolean }>(
    `SELECT session_user AS login, r.rolname, r.rolsuper FROM pg_roles r
      WHERE pg_has_role(session_user, r.oid, 'MEMBER') AND (r.rolsuper OR r.rolname = ANY($1))
      ORDER BY r.rolname`,
    [SERVER_ROLES],
  );
  const login = rows[0]?.login;
  if (login === undefined) return [];
  const self = rows.find((row) => row.rolname === login && row.rolsuper);
  // A superuser is a member of every role: naming them all would bury the point.
  if (self !== undefined) return [`role ${login} is a superuser`];
  return rows.map((row) =>
    row.rolsuper
      ? `role ${login} can become superuser ${row.rolname}`
      : `role ${login} is a member of ${row.rolname}`,
  );
}
