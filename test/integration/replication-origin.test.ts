/**
 * How a two-way writer marks its transactions with a replication origin (sources/
 * replication-origin.ts), on the shared PostgreSQL (origins need no logical WAL): the
 * commit carries the origin (the server's progress of it moves), a login without the
 * rights is told the GRANT, a missing origin is made on first use, and an origin another
 * session holds is waited for, then given up on with a message saying why.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withOrigin } from '../../src/sync/sources/replication-origin.ts';
import { PG_URL, pgQuery } from '../helpers/pg.ts';

const ORIGIN = `rbtest_origin_${process.pid}`;
const ROLE = `rbtest_writer_${process.pid}`;
const TABLE = `rbtest_origin_t_${process.pid}`;
const session = { who: `postgres table ${TABLE} (TW_DB)`, role: ROLE };
const clients: pg.Client[] = [];

async function connect(url = PG_URL): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  clients.push(client);
  return client;
}
const roleUrl = () => {
  const url = new URL(PG_URL);
  url.username = ROLE;
  return url.toString();
};
const progress = async () =>
  (
    await pgQuery<{ local_lsn: string | null }>([
      `SELECT local_lsn::text FROM pg_replication_origin_status s JOIN pg_replication_origin o ON o.roident = s.local_id WHERE o.roname = $1`,
      [ORIGIN],
    ])
  )[0]?.local_lsn ?? null;

beforeAll(async () => {
  await pgQuery(
    `DROP TABLE IF EXISTS ${TABLE}`,
    `CREATE TABLE ${TABLE} (id int PRIMARY KEY)`,
    `DROP ROLE IF EXISTS ${ROLE}`,
    `CREATE ROLE ${ROLE} LOGIN`,
    `GRANT INSERT ON ${TABLE} TO ${ROLE}`,
  );
});

afterAll(async () => {
  for (const client of clients) await client.end().catch(() => undefined);
  await pgQuery(
    `DROP TABLE IF EXISTS ${TABLE}`,
    `SELECT pg_replication_origin_drop(roname) FROM pg_replication_origin WHERE roname = '${ORIGIN}'`,
    `DROP OWNED BY ${ROLE}`,
    `DROP ROLE IF EXISTS ${ROLE}`,
  );
});

describe('marking writes with a replication origin', () => {
  it('tells a login without the rights which GRANT it needs, and writes nothing', async () => {
    const writer = await connect(roleUrl());
    let wrote = false;
    await expect(
      withOrigin(writer, ORIGIN, session, async () => {
        wrote = true;
        await writer.query(`INSERT INTO ${TABLE} VALUES (0)`);
      }),
    ).rejects.toThrow(
      `postgres table ${TABLE} (TW_DB): the login cannot mark its writes with replication origin ${ORIGIN}: as a superuser, GRANT EXECUTE ON FUNCTION pg_replication_origin_session_setup(text), pg_replication_origin_session_reset() TO "${ROLE}"`,
    );
    expect(wrote).toBe(false);
    await pgQuery(
      `GRANT EXECUTE ON FUNCTION pg_replication_origin_session_setup(text), pg_replication_origin_session_reset() TO ${ROLE}`,
    );
    // Allowed to use one, not to make one: the message says who can.
    await expect(withOrigin(writer, ORIGIN, session, () => Promise.resolve())).rejects.toThrow(
      `replication origin ${ORIGIN} does not exist and the login cannot create it: run rowbridge cdc setup on the postgres-cdc job with origin: ${ORIGIN}, or as a superuser GRANT EXECUTE ON FUNCTION pg_replication_origin_create(text) TO "${ROLE}"`,
    );
  });

  it('makes the origin on first use, and the commit carries it; the session is reset after', async () => {
    await pgQuery(`GRANT EXECUTE ON FUNCTION pg_replication_origin_create(text) TO ${ROLE}`);
    const writer = await connect(roleUrl());
    await withOrigin(writer, ORIGIN, session, async () => {
      await writer.query('BEGIN');
      await writer.query(`INSERT INTO ${TABLE} VALUES (1)`);
      await writer.query('COMMIT');
    });
    const marked = await progress();
    expect(marked).not.toBeNull();
    // Reset: the next transaction of the session is not marked (the origin's progress stays).
    await writer.query(`INSERT INTO ${TABLE} VALUES (2)`);
    expect(await progress()).toBe(marked);
    // A failed transaction still resets the session: the next setup succeeds.
    await expect(
      withOrigin(writer, ORIGIN, session, async () => {
        await writer.query(`INSERT INTO ${TABLE} VALUES (1)`);
      }),
    ).rejects.toThrow(/duplicate key/);
    await withOrigin(writer, ORIGIN, session, () => writer.query(`INSERT INTO ${TABLE} VALUES (3)`));
    expect(await progress()).not.toBe(marked);
  });

  it('waits while another session holds the origin, and gives up after busyWaitMs saying why', async () => {
    const holder = await connect();
    const writer = await connect(roleUrl());
    await holder.query('SELECT pg_replication_origin_session_setup($1)', [ORIGIN]);
    await expect(
      withOrigin(writer, ORIGIN, { ...session, busyWaitMs: 300 }, () => Promise.resolve()),
    ).rejects.toThrow(
      /replication origin rbtest_origin_\d+ stayed in use by another session for 300 ms .*give each its own/,
    );
    const released = new Promise((r) => setTimeout(r, 300)).then(() =>
      holder.query('SELECT pg_replication_origin_session_reset()'),
    );
    await withOrigin(writer, ORIGIN, { ...session, busyWaitMs: 10_000 }, () =>
      writer.query(`INSERT INTO ${TABLE} VALUES (4)`),
    );
    await released;
    const [{ n }] = (await pgQuery<{ n: string }>(`SELECT count(*) AS n FROM ${TABLE}`)) as [{ n: string }];
    expect(Number(n)).toBe(4);
  });
});
