/**
 * `cdc setup` of a job with `origin:`: creates the replication origin that a two-way job's
 * writes to the table will carry (the stream drops them). The setup login needs EXECUTE on
 * pg_replication_origin_create (revoked from PUBLIC); without it the message says what to
 * grant, or who else may create it.
 */
import type pg from 'pg';
import { CREATE_FUNCTION, createOrigin, originGrant } from '../sources/replication-origin.ts';

/** Creates `origin` unless it exists; answers what it did. `done` is what setup did before. */
export async function setupOrigin(
  client: pg.Client,
  origin: string,
  done: readonly string[],
): Promise<string> {
  try {
    return (await createOrigin(client, origin))
      ? `created replication origin ${origin}`
      : `replication origin ${origin} exists`;
  } catch (err) {
    if ((err as { code?: unknown }).code !== '42501') throw err;
    const { rows } = await client.query<{ role: string }>('SELECT session_user AS role');
    throw new Error(
      `${done.join('; ')}; but the login cannot create replication origin ${origin}: as a superuser, ` +
        `${originGrant([CREATE_FUNCTION], rows[0]?.role ?? 'LOGIN')}, or SELECT pg_replication_origin_create('${origin}') ` +
        '(a two-way login allowed to create it also does on its first write)',
      { cause: err },
    );
  }
}
