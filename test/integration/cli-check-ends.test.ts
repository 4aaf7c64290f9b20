/**
 * `rowbridge check JOB` connects to the job's source and sink too (issue 23): the
 * database reached over the source's own privilege-checked connection, the table and
 * the columns the job names, a file present with its columns, a sink table's columns.
 * Run as a user types it, with a Redis URL nothing answers on: check needs no Redis.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { PG_URL, pgQuery } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const SCHEMA = `rbcheck_${process.pid}`;
const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

describe('check JOB: the source and the sink', { timeout: 120_000 }, () => {
  let h: Harness;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    await pgQuery(
      `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`,
      `CREATE SCHEMA ${SCHEMA}`,
      `CREATE TABLE ${SCHEMA}.contacts (id int PRIMARY KEY, email text, updated_at int NOT NULL)`,
      `CREATE TABLE ${SCHEMA}.export (code text PRIMARY KEY, title text)`,
    );
    h = await createHarness('checkends', {}, { CRM_DB: PG_URL, SHOP_DB: MYSQL_URL });
    h.createWorksheet({
      name: 'Contacts',
      alias: 'contacts',
      fields: [
        { name: 'Email', alias: 'email', type: 'Text', required: true, isTitle: true },
        { name: 'Note', alias: 'note', type: 'Text' },
      ],
    });
    const target = 'target: { worksheet: contacts, mode: upsert, key: email }';
    const pgSource = (extra: string) =>
      `source: { type: postgres, urlEnv: CRM_DB, table: ${SCHEMA}.contacts, keyColumn: id${extra} }`;
    await h.writeJob(
      'db-good',
      `name: db-good\n${pgSource(', cursorColumn: updated_at, allowPrivilegedSource: true')}\n${target}\nfields: { email: email }\n`,
    );
    await h.writeJob(
      'db-typo',
      `name: db-typo\n${pgSource(', cursorColumn: updatedat, allowPrivilegedSource: true')}\n${target}\nfields: { email: emial }\n`,
    );
    await h.writeJob(
      'db-root',
      `name: db-root\n${pgSource(', cursorColumn: updated_at')}\n${target}\nfields: { email: email }\n`,
    );
    await h.writeJob(
      'db-nosuch',
      `name: db-nosuch\nsource: { type: postgres, urlEnv: CRM_DB, table: ${SCHEMA}.contactz, cursorColumn: id, allowPrivilegedSource: true }\n${target}\nfields: { email: email }\n`,
    );
    await h.writeJob(
      'shop',
      `name: shop\nsource: { type: mysql, urlEnv: SHOP_DB, query: "SELECT 1 AS id, 'a@b.c' AS e_mail", cursorColumn: id, allowPrivilegedSource: true }\n${target}\nfields: { email: email }\n`,
    );
    await h.writeFile('contacts.csv', 'email,note\na@b.c,hi\n');
    await h.writeJob(
      'csv-good',
      `name: csv-good\nsource: { type: csv, path: ./contacts.csv }\n${target}\nfields: { email: email, note: note }\n`,
    );
    await h.writeJob(
      'csv-typo',
      `name: csv-typo\nsource: { type: csv, path: ./contacts.csv }\n${target}\nfields: { email: email, note: notes }\n`,
    );
    await h.writeJob(
      'csv-gone',
      `name: csv-gone\nsource: { type: csv, path: ./nowhere.csv }\n${target}\nfields: { email: email }\n`,
    );
    const pull = (name: string, sink: string, fields = 'code: email, title: note') =>
      h.writeJob(
        name,
        `name: ${name}\nsource: { type: worksheet, worksheet: contacts }\nsink: ${sink}\nfields: { ${fields} }\n`,
      );
    await pull('sink-good', `{ type: postgres, urlEnv: CRM_DB, table: ${SCHEMA}.export, key: code }`);
    await pull(
      'sink-typo',
      `{ type: postgres, urlEnv: CRM_DB, table: ${SCHEMA}.export, key: code }`,
      'code: email, titel: note',
    );
    await pull('sink-dir', '{ type: csv, path: ./no/such/folder/out.csv }');
  });
  afterEach(() => killChildren(children));
  afterAll(async () => {
    await h.close();
    await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  });

  /** `rowbridge check JOB`, with a Redis nothing answers on. */
  const check = async (job: string, ...more: string[]) => {
    const done = await spawnCli(h, children, ['check', job, ...more], { REDIS_URL: 'redis://127.0.0.1:9' })
      .exited;
    return { code: done.code, out: done.stdout, err: done.stderr };
  };

  it('a database source that is right: reached read-only, its table has the columns; exit 0', async () => {
    const { code, out, err } = await check('db-good');
    expect(code, out + err).toBe(0);
    expect(out).toMatch(/source\s+ok\s+postgres \(CRM_DB\) reached/);
    expect(out).toMatch(
      new RegExp(`source columns\\s+ok\\s+source table ${SCHEMA}\\.contacts has the 3 columns the job names`),
    );
  });

  it('a typo in a column: names it, what names it, and the column meant; exit 1', async () => {
    const { code, out } = await check('db-typo');
    expect(code).toBe(1);
    expect(out).toContain(
      `source table ${SCHEMA}.contacts has no column updatedat (source.cursorColumn; did you mean updated_at?)`,
    );
    expect(out).toContain(`has no column emial (fields.email; did you mean email?)`);
  });

  it('a privileged login is refused as the source refuses it; exit 1', async () => {
    const { code, out } = await check('db-root');
    expect(code).toBe(1);
    expect(out).toMatch(/source\s+FAILED\s+.*superuser.*allowPrivilegedSource/);
  });

  it('a missing table: the database says so; exit 1', async () => {
    const { code, out } = await check('db-nosuch', '--json');
    expect(code).toBe(1);
    const report = JSON.parse(out) as { steps: Array<{ name: string; ok: boolean; detail: string }> };
    const source = report.steps.find((s) => s.name === 'source')!;
    expect(source.ok).toBe(false);
    expect(source.detail).toMatch(/contactz.*does not exist/);
  });

  it('a mysql source query without the mapped column; exit 1', async () => {
    const { code, out } = await check('shop');
    expect(code).toBe(1);
    expect(out).toContain('the mysql source query has no column email (fields.email; did you mean e_mail?)');
  });

  it('a file source: present and read, or the missing file and a mistyped column named; exit 0 / 1', async () => {
    const good = await check('csv-good');
    expect(good.code, good.out).toBe(0);
    expect(good.out).toMatch(/source\s+ok\s+csv source \.\/contacts\.csv: read the first 1 record/);
    const typo = await check('csv-typo');
    expect(typo.code).toBe(1);
    expect(typo.out).toContain(
      'csv source ./contacts.csv has no column notes (fields.note; did you mean note?)',
    );
    const gone = await check('csv-gone');
    expect(gone.code).toBe(1);
    expect(gone.out).toMatch(/source\s+FAILED\s+.*nowhere\.csv/);
  });

  it('a sink: its table and columns, or its folder; exit 0 / 1', async () => {
    const good = await check('sink-good');
    expect(good.code, good.out).toBe(0);
    expect(good.out).toMatch(
      /sink\s+ok\s+postgres sink \(CRM_DB\) reached; table .*export has the 2 columns/,
    );
    const typo = await check('sink-typo');
    expect(typo.code).toBe(1);
    expect(typo.out).toContain(`sink table ${SCHEMA}.export has no column titel (did you mean title?)`);
    const dir = await check('sink-dir');
    expect(dir.code).toBe(1);
    expect(dir.out).toMatch(/sink\s+FAILED\s+csv sink \.\/no\/such\/folder\/out\.csv: no folder/);
  });
});
