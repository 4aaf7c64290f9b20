/**
 * Attack: a value stored in the source table rewrites the next keyset page's WHERE when
 * the server runs with NO_BACKSLASH_ESCAPES (issue 22, item 4). mysql2 escapes a quote as
 * `\'`; in that mode a backslash is a plain character, so the quote closes the string
 * and the rest of the value is SQL: here a UNION that pulls the rows of another table.
 * The source session now drops the mode at connect.
 *
 * The mode is switched on server-wide (SET GLOBAL) only while the source opens its
 * connection, since a session inherits it there; it is put back right after.
 */
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSource } from '../../src/sync/sources/create-source.ts';
import type { SourceItem } from '../../src/sync/sources/source-error.ts';

const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const items = `rb_sec_nbe_${process.pid}_items`;
const secrets = `rb_sec_nbe_${process.pid}_secrets`;
const evil = `' UNION SELECT secret, CAST(secret AS CHAR) FROM ${secrets} #`;

describe('mysql keyset pages under NO_BACKSLASH_ESCAPES', () => {
  let my: mysql.Connection;

  beforeAll(async () => {
    my = await mysql.createConnection({ uri: MYSQL_URL });
    await my.query(`DROP TABLE IF EXISTS ${items}, ${secrets}`);
    await my.query(`CREATE TABLE ${items} (code varchar(200) PRIMARY KEY)`);
    await my.query(`CREATE TABLE ${secrets} (secret varchar(200))`);
    await my.query(`INSERT INTO ${items} VALUES (?)`, [evil]);
    await my.query(`INSERT INTO ${secrets} VALUES ('top-secret')`);
  });

  afterAll(async () => {
    await my?.query(`DROP TABLE IF EXISTS ${items}, ${secrets}`);
    await my?.end();
  });

  it('a cursor value from the table does not pull rows of another table', async () => {
    const source = createSource(
      {
        type: 'mysql',
        urlEnv: 'NBE_DB',
        table: items,
        cursorColumn: 'code',
        batchSize: 1,
        allowPrivilegedSource: true,
      },
      { env: { NBE_DB: MYSQL_URL }, baseDir: '/' },
    );
    const [globalRows] = await my.query('SELECT @@GLOBAL.sql_mode AS mode');
    const saved = (globalRows as Array<{ mode: string }>)[0]?.mode ?? '';
    const read: SourceItem[] = [];
    let probeMode: string;
    await my.query(`SET GLOBAL sql_mode = ?`, [`${saved},NO_BACKSLASH_ESCAPES`]);
    try {
      // The source connects on its first pull; a probe shows what a new session gets.
      const probe = await mysql.createConnection({ uri: MYSQL_URL });
      const [probeRows] = await probe.query('SELECT @@SESSION.sql_mode AS mode');
      probeMode = (probeRows as Array<{ mode: string }>)[0]?.mode ?? '';
      await probe.end();
      const first = await source.next();
      if (first.done !== true) read.push(first.value);
    } finally {
      await my.query(`SET GLOBAL sql_mode = ?`, [saved]);
    }
    for await (const item of source) read.push(item);
    expect(probeMode).toContain('NO_BACKSLASH_ESCAPES');
    expect(read.map((item) => item.data)).toEqual([{ code: evil }]);
  });
});
