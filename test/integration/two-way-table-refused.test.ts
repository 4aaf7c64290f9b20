/**
 * Two-way with a PostgreSQL table that refuses some of the worksheet's records (issue 25):
 * a duplicate of a UNIQUE column, a value too long for varchar(20) and a CHECK violation,
 * as updates and as new records, and a delete a foreign key holds, among good edits, new
 * records and a delete. Each refused record is a dead letter with its SQLSTATE, the
 * column and what is allowed; the good ones land once (writes counted by a trigger); the
 * next run commits nothing; fixed by a person, they sync and the dead letters clear
 * (scenario: test/helpers/two-way-table-refused.ts).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { pgQuery, PG_URL } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import { refusedTableScenario, SEEDED } from '../helpers/two-way-table-refused.ts';

const SCHEMA = `twr_${process.pid}`;
const TABLE = `${SCHEMA}.contacts`;

let h: Harness;
let sheet: WorksheetStructure;

beforeAll(async () => {
  h = await createHarness('two-way-table-refused', { requestLogLimit: 1_000_000 }, { TWR_DB: PG_URL });
  await pgQuery(
    `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`,
    `CREATE SCHEMA ${SCHEMA}`,
    `CREATE TABLE ${TABLE} (id serial PRIMARY KEY, email text, full_name varchar(20), handle text UNIQUE,
       score integer CHECK (score >= 0), updated_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TABLE ${SCHEMA}.orders (id serial PRIMARY KEY, contact_id integer REFERENCES ${TABLE} (id))`,
    `CREATE TABLE ${SCHEMA}.writes (n bigint NOT NULL)`,
    `INSERT INTO ${SCHEMA}.writes VALUES (0)`,
    `CREATE FUNCTION ${SCHEMA}.touch() RETURNS trigger AS $$ BEGIN
       IF NEW.updated_at = OLD.updated_at THEN NEW.updated_at := now(); END IF; RETURN NEW; END $$ LANGUAGE plpgsql`,
    `CREATE TRIGGER touch BEFORE UPDATE ON ${TABLE} FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.touch()`,
    `CREATE FUNCTION ${SCHEMA}.count_write() RETURNS trigger AS $$ BEGIN
       UPDATE ${SCHEMA}.writes SET n = n + 1; RETURN NULL; END $$ LANGUAGE plpgsql`,
    `CREATE TRIGGER counted AFTER INSERT OR UPDATE OR DELETE ON ${TABLE} FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.count_write()`,
    `INSERT INTO ${TABLE} (email, full_name, handle, score, updated_at)
       SELECT 't' || i || '@x.test', 'Person ' || i, 'h' || i, i, '2024-01-01T00:00:00Z' FROM generate_series(0, ${SEEDED - 1}) i`,
    `UPDATE ${SCHEMA}.writes SET n = 0`,
  );
  sheet = h.emulator.createWorksheet(h.appId, {
    name: 'Contacts',
    alias: 'contacts',
    fields: [
      { name: 'Email', alias: 'email', type: 'Text' },
      { name: 'Name', alias: 'name', type: 'Text' },
      { name: 'Handle', alias: 'handle', type: 'Text' },
      { name: 'Score', alias: 'score', type: 'Number' },
    ],
  });
  await h.writeJob(
    'contacts',
    `name: contacts
source: { type: postgres, urlEnv: TWR_DB, table: ${TABLE}, keyColumn: id, updatedAtColumn: updated_at, allowPrivilegedSource: true }
target: { worksheet: contacts, mode: two-way, key: email }
fields: { email: email, name: full_name, handle: handle, score: score }
`,
  );
}, 60_000);

afterAll(async () => {
  await h?.close();
  await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
});

describe('two-way: records a postgres table refuses (issue 25)', () => {
  it('are dead letters with their SQLSTATE; the others land once; the next run commits nothing; fixed, they sync', async () => {
    await refusedTableScenario({
      h,
      sheet,
      job: 'contacts',
      table: TABLE,
      orders: `${SCHEMA}.orders`,
      exec: async (sql) => void (await pgQuery(sql)),
      tableWrites: async () => Number((await pgQuery<{ n: string }>(`SELECT n FROM ${SCHEMA}.writes`))[0]!.n),
      contents: async () =>
        new Map(
          (
            await pgQuery<{ email: string; v: string }>(
              `SELECT email, concat_ws('|', full_name, handle, score) AS v FROM ${TABLE}`,
            )
          ).map((r) => [r.email, r.v]),
        ),
      expect: {
        unique: { code: /SQLSTATE 23505 unique_violation/ },
        tooLong: { code: /SQLSTATE 22001 string_data_right_truncation/ },
        check: {
          code: /allowed: values satisfying CHECK \(\(?score >= 0\)?\) \(SQLSTATE 23514 check_violation\)/,
        },
        foreignKey: { code: /SQLSTATE 23503 foreign_key_violation/ },
      },
    });
  }, 180_000);
});
