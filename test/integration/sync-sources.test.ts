import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreateWorksheetInput } from '../../src/api/types.ts';
import { PG_URL, pgQuery } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const TAG = `rb_src_${process.pid}`;

const PEOPLE: CreateWorksheetInput = {
  name: 'People',
  alias: 'people',
  fields: [
    { name: 'Code', alias: 'code', type: '2', required: true, isTitle: true },
    { name: 'Name', alias: 'name', type: '2' },
    { name: 'Score', alias: 'score', type: '6' },
  ],
};

const RECORDS = [
  { code: 'P1', name: 'Ada', score: 90, updated: 1 },
  { code: 'P2', name: 'Grace', score: 85, updated: 2 },
  { code: 'P3', name: 'Edsger', score: 70, updated: 3 },
];

function jobFor(name: string, source: string, extra = ''): string {
  return `name: ${name}
source: ${source}
target: { worksheet: people, mode: upsert, key: code, batchSize: 2 }
fields: { code: code, name: name, score: score }
${extra}`;
}

describe('every source type through the engine', () => {
  let h: Harness;
  let ws: string;
  let http: Server;
  let httpUrl: string;
  const httpAuth: string[] = [];

  const landed = () =>
    new Map(
      h.emulator.state
        .rows(ws)
        .map((r) => [String(r.values.code), { name: r.text.name, score: r.text.score }] as const),
    );

  beforeAll(async () => {
    h = await createHarness(
      'sources',
      {},
      {
        PEOPLE_DB: PG_URL,
        PEOPLE_MYSQL: MYSQL_URL,
        PEOPLE_API_TOKEN: 'api-token-secret',
        ROWBRIDGE_SOURCE_ENV_ALLOW: 'PEOPLE_API_TOKEN',
      },
    );
    http = createServer((req, res) => {
      httpAuth.push(String(req.headers.authorization));
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ data: { items: RECORDS.slice((page - 1) * 2, page * 2) } }));
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    httpUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}/people`;

    await pgQuery(
      `CREATE SCHEMA ${TAG}`,
      `CREATE TABLE ${TAG}.people (code text primary key, name text, score int, updated int)`,
      ...RECORDS.map((r): [string, unknown[]] => [
        `INSERT INTO ${TAG}.people VALUES ($1, $2, $3, $4)`,
        [r.code, r.name, r.score, r.updated],
      ]),
    );
    const my = await mysql.createConnection(MYSQL_URL);
    await my.query(`CREATE TABLE ${TAG} (code varchar(10) primary key, name text, score int, updated int)`);
    for (const r of RECORDS)
      await my.query(`INSERT INTO ${TAG} VALUES (?, ?, ?, ?)`, [r.code, r.name, r.score, r.updated]);
    await my.end();
  });

  afterAll(async () => {
    await new Promise((r) => http.close(r));
    await pgQuery(`DROP SCHEMA IF EXISTS ${TAG} CASCADE`);
    const my = await mysql.createConnection(MYSQL_URL);
    await my.query(`DROP TABLE IF EXISTS ${TAG}`);
    await my.end();
    await h.close();
  });

  async function runFresh(name: string, yaml: string) {
    ws = h.createWorksheet({ ...PEOPLE, alias: `people_${name.replace(/-/g, '_')}` });
    await h.writeJob(name, yaml.replace('worksheet: people', `worksheet: ${ws}`));
    return h.runJob(name);
  }

  const expected = new Map(RECORDS.map((r) => [r.code, { name: r.name, score: String(r.score) }]));

  it('csv', async () => {
    await h.writeFile(
      'people.csv',
      `code,name,score\n${RECORDS.map((r) => `${r.code},${r.name},${r.score}`).join('\n')}\n`,
    );
    const { report } = await runFresh(
      'people-csv',
      jobFor('people-csv', '{ type: csv, path: ./people.csv }'),
    );
    expect(report.created).toBe(3);
    expect(landed()).toEqual(expected);
  });

  it('ndjson', async () => {
    await h.writeFile('people.ndjson', RECORDS.map((r) => JSON.stringify(r)).join('\n'));
    await runFresh('people-ndjson', jobFor('people-ndjson', '{ type: ndjson, path: ./people.ndjson }'));
    expect(landed()).toEqual(expected);
  });

  it('json with a path to the array', async () => {
    await h.writeFile('people.json', JSON.stringify({ result: { people: RECORDS } }));
    await runFresh(
      'people-json',
      jobFor('people-json', '{ type: json, path: ./people.json, itemsPath: result.people }'),
    );
    expect(landed()).toEqual(expected);
  });

  it('http with page pagination and an auth header from the environment', async () => {
    await runFresh(
      'people-http',
      jobFor(
        'people-http',
        `{ type: http, url: "${httpUrl}", itemsPath: data.items, headers: { Authorization: "Bearer \${PEOPLE_API_TOKEN}" }, pagination: { type: page, pageSize: 2 } }`,
      ),
    );
    expect(landed()).toEqual(expected);
    expect(httpAuth).toContain('Bearer api-token-secret');
  });

  it('postgres read in cursor order, incrementally', async () => {
    const yaml = jobFor(
      'people-pg',
      // The source's cursorColumn is the job's one cursor (issue 23 §4): no `incremental`.
      `{ type: postgres, urlEnv: PEOPLE_DB, allowPrivilegedSource: true, table: ${TAG}.people, cursorColumn: updated }`,
    );
    await runFresh('people-pg', yaml);
    expect(landed()).toEqual(expected);
    expect(String(JSON.parse((await h.rt.runs.getCursor('people-pg')) ?? 'null'))).toBe('3');
    // A second run reads only rows past the saved cursor.
    // P5 arrives late with the very cursor value the first run saved.
    await pgQuery(`INSERT INTO ${TAG}.people VALUES ('P4', 'Barbara', 99, 4), ('P5', 'Alan', 77, 3)`);
    const again = await h.runJob('people-pg');
    // Rows at the saved cursor are read again: P3 is unchanged (no request), P5 lands.
    expect(again.report).toMatchObject({ read: 3, created: 2, unchanged: 1 });
    expect(landed().get('P4')).toEqual({ name: 'Barbara', score: '99' });
    expect(landed().get('P5')).toEqual({ name: 'Alan', score: '77' });
  });

  it('mysql', async () => {
    await runFresh(
      'people-my',
      jobFor(
        'people-my',
        `{ type: mysql, urlEnv: PEOPLE_MYSQL, allowPrivilegedSource: true, table: ${TAG}, cursorColumn: updated }`,
      ),
    );
    expect(landed()).toEqual(expected);
  });

  it('worksheet of another application (cross-system sync)', async () => {
    const other = h.emulator.createApp({ name: 'crm' });
    const crmSheet = h.emulator.createWorksheet(other.appId, {
      ...PEOPLE,
      name: 'Contacts',
      alias: 'contacts',
    });
    h.env.CRM_APPKEY = other.appKey;
    h.env.CRM_SIGN = other.sign;
    h.env.CRM_API_URL = h.emulator.url;
    const crm = h.rt.clientFor('CRM_');
    await crm.rows.batchCreate(crmSheet.id, {
      rows: RECORDS.map((r) => ({
        fields: [
          { id: 'code', value: r.code },
          { id: 'name', value: r.name },
          { id: 'score', value: r.score },
        ],
      })),
    });
    await runFresh(
      'people-ws',
      jobFor('people-ws', `{ type: worksheet, worksheet: ${crmSheet.id}, credentialsEnvPrefix: CRM_ }`),
    );
    expect(landed()).toEqual(expected);
  });
});
