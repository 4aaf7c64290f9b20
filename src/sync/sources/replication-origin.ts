/**
 * PostgreSQL replication origins, as rowbridge uses them to tell its own writes apart.
 * A session that has set up an origin stamps it on the commit of every transaction it
 * makes, and pgoutput sends that origin's name with the transaction (an Origin message
 * right after Begin). A two-way job marks its writes to a table this way; a postgres-cdc
 * stream capturing the same table drops the transactions carrying that origin, so a write
 * rowbridge made is not captured and written back (no echo). PostgreSQL 15 has no
 * `origin = none` option for pgoutput (16+), so the stream drops them itself.
 *
 * Rights (PostgreSQL 14+): the origin functions are revoked from PUBLIC; a login needs
 * EXECUTE on them, granted by a superuser (see {@link originGrant}).
 */
import type pg from 'pg';
import { SourceError } from './source-error.ts';

/** What a writing session calls around each transaction. */
export const SESSION_FUNCTIONS = [
  'pg_replication_origin_session_setup(text)',
  'pg_replication_origin_session_reset()',
] as const;
/** What makes an origin that does not exist yet (`cdc setup`, or a writer's first use). */
export const CREATE_FUNCTION = 'pg_replication_origin_create(text)';

/** How long a writer waits for an origin another session holds. @defaultValue 30000 */
const BUSY_WAIT_MS = 30_000;

/** `GRANT EXECUTE ON FUNCTION … TO role`, for the functions `missing` names. */
export function originGrant(missing: readonly string[], role: string): string {
  return `GRANT EXECUTE ON FUNCTION ${missing.join(', ')} TO "${role.replaceAll('"', '""')}"`;
}

/** Whether the origin exists (pg_replication_origin is readable by every role). */
export async function originExists(client: pg.ClientBase, name: string): Promise<boolean> {
  const { rows } = await client.query('SELECT 1 FROM pg_replication_origin WHERE roname = $1', [name]);
  return rows.length > 0;
}

/**
 * The origin functions the connected login cannot execute (empty: none): the session
 * pair, and the create function too when the origin does not exist yet.
 */
export async function missingOriginRights(client: pg.ClientBase, name: string): Promise<string[]> {
  const wanted: string[] = [...SESSION_FUNCTIONS];
  if (!(await originExists(client, name))) wanted.push(CREATE_FUNCTION);
  const { rows } = await client.query<{ fn: string; ok: boolean }>(
    `SELECT fn, has_function_privilege(fn, 'EXECUTE') AS ok FROM unnest($1::text[]) AS fn`,
    [wanted],
  );
  return rows.filter((r) => !r.ok).map((r) => r.fn);
}

/** Creates the origin unless it exists; true when this call made it. */
export async function createOrigin(client: pg.ClientBase, name: string): Promise<boolean> {
  if (await originExists(client, name)) return false;
  try {
    await client.query('SELECT pg_replication_origin_create($1)', [name]);
    return true;
  } catch (err) {
    // Made by another session between the look and the create.
    if (pgCode(err) === '23505') return false;
    throw err;
  }
}

/** What {@link withOrigin} needs to say who failed, and to wait. */
export interface OriginSession {
  /** Names the table and its URL variable in every message. */
  who: string;
  /** The login, for the GRANT a message proposes. */
  role: string;
  /** @defaultValue 30000 */
  busyWaitMs?: number;
}

/**
 * Runs `work` (one transaction, begun and ended inside it) with the session's origin set
 * up, and resets the origin after, whatever `work` did. An origin is held by one session
 * at a time: while another holds it (another job writing with the same origin) this waits,
 * up to `busyWaitMs`. A missing origin is created on first use when the login may.
 */
export async function withOrigin<T>(
  client: pg.ClientBase,
  name: string,
  session: OriginSession,
  work: () => Promise<T>,
): Promise<T> {
  await setUp(client, name, session);
  try {
    return await work();
  } finally {
    // A broken connection drops the origin with the session: nothing left to reset.
    await client.query('SELECT pg_replication_origin_session_reset()').catch(() => undefined);
  }
}

async function setUp(client: pg.ClientBase, name: string, session: OriginSession): Promise<void> {
  const deadline = Date.now() + (session.busyWaitMs ?? BUSY_WAIT_MS);
  let pause = 50;
  let created = false;
  for (;;) {
    try {
      await client.query('SELECT pg_replication_origin_session_setup($1)', [name]);
      return;
    } catch (err) {
      const code = pgCode(err);
      if (code === '42704' && !created) {
        await createOnFirstUse(client, name, session);
        created = true;
      } else if (code === '42501') throw refused(session, name, [...SESSION_FUNCTIONS]);
      else if (code === '55006' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, pause));
        pause = Math.min(pause * 2, 1_000);
      } else if (code === '55006')
        throw new SourceError(
          'SOURCE_UNAVAILABLE',
          `${session.who}: replication origin ${name} stayed in use by another session for ${waited(session.busyWaitMs ?? BUSY_WAIT_MS)} (${(err as Error).message}): two jobs write with this origin at once; give each its own`,
        );
      else throw err;
    }
  }
}

async function createOnFirstUse(client: pg.ClientBase, name: string, session: OriginSession): Promise<void> {
  try {
    await createOrigin(client, name);
  } catch (err) {
    if (pgCode(err) !== '42501') throw err;
    throw new SourceError(
      'SOURCE_CONFIG',
      `${session.who}: replication origin ${name} does not exist and the login cannot create it: run rowbridge cdc setup on the postgres-cdc job with origin: ${name}, or as a superuser ${originGrant([CREATE_FUNCTION], session.role)} (docs/cdc.md)`,
    );
  }
}

function refused(session: OriginSession, name: string, missing: string[]): SourceError {
  return new SourceError(
    'SOURCE_CONFIG',
    `${session.who}: the login cannot mark its writes with replication origin ${name}: as a superuser, ${originGrant(missing, session.role)} (docs/two-way.md)`,
  );
}

function waited(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}

function pgCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
