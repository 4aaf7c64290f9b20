import pg from 'pg';

/** The test database (trust auth on these machines). */
export const PG_URL = process.env.TEST_PG_URL ?? 'postgres://root@127.0.0.1:5432/test';

/** Runs statements on a short-lived connection and returns the last result's rows. */
export async function pgQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(
  ...statements: Array<string | [string, unknown[]]>
): Promise<R[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    let rows: R[] = [];
    for (const statement of statements) {
      const [text, values] = typeof statement === 'string' ? [statement, []] : statement;
      rows = (await client.query<R>(text, values)).rows;
    }
    return rows;
  } finally {
    await client.end();
  }
}
