/**
 * Where a refused row is, as a user reads it from the CLI (issue 23): one form in
 * `dlq list`, `dlq export`, `dlq show` and `plan`: `line N` for a file (the line an
 * editor shows, header counted), the key column and its value for a database table,
 * `record N` for an http source.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { PG_URL, pgQuery } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const SCHEMA = `rbpos_${process.pid}`;

describe('row positions: one form everywhere a row is shown', { timeout: 120_000 }, () => {
  let h: Harness;
  let server: Server;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    await pgQuery(
      `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`,
      `CREATE SCHEMA ${SCHEMA}`,
      `CREATE TABLE ${SCHEMA}.orders (order_id int PRIMARY KEY, amount text, updated_at int NOT NULL)`,
      `INSERT INTO ${SCHEMA}.orders VALUES (41, '10', 1), (42, 'ten', 2), (43, '30', 3)`,
    );
    server = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify([
          { no: 'H-1', amount: 1 },
          { no: 'H-2', amount: 'two' },
          { no: 'H-3', amount: 3 },
        ]),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    h = await createHarness('positions', {}, { ORDERS_DB: PG_URL });
    h.createWorksheet({
      name: 'Orders',
      alias: 'orders',
      fields: [
        { name: 'No', alias: 'no', type: 'Text', required: true, isTitle: true },
        { name: 'Amount', alias: 'amount', type: 'Number' },
      ],
    });
    const target = 'target: { worksheet: orders, mode: upsert, key: no }';
    await h.writeJob(
      'db-orders',
      `name: db-orders
source: { type: postgres, urlEnv: ORDERS_DB, allowPrivilegedSource: true, table: ${SCHEMA}.orders, cursorColumn: updated_at, keyColumn: order_id }
${target}
fields: { no: order_id, amount: amount }
`,
    );
    await h.writeFile('orders.csv', 'no,amount\nC-1,1\nC-2,two\n');
    await h.writeJob(
      'csv-orders',
      `name: csv-orders\nsource: { type: csv, path: ./orders.csv }\n${target}\nfields: { no: no, amount: amount }\n`,
    );
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`;
    await h.writeJob(
      'http-orders',
      `name: http-orders\nsource: { type: http, url: "${url}" }\n${target}\nfields: { no: no, amount: amount }\n`,
    );
  });
  afterEach(() => killChildren(children));
  afterAll(async () => {
    await h.close();
    await new Promise((resolve) => server.close(resolve));
    await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  });

  const cli = async (args: string[]) => spawnCli(h, children, args).exited;

  it.each([
    ['db-orders', 'order_id 42'],
    ['csv-orders', 'line 3'],
    ['http-orders', 'record 2'],
  ])('%s: plan, run, dlq list, show and export name the row as "%s"', async (job, label) => {
    const plan = await cli(['plan', job]);
    expect(plan.stdout, plan.stderr).toContain(`rejected ${label}: `);

    const run = await cli(['run', job]);
    expect(run.code, run.stderr).toBe(2);
    const list = await cli(['dlq', 'list', '--job', job]);
    expect(list.code, list.stderr).toBe(0);
    const row = list.stdout.split('\n').find((l) => l.includes(` ${job} `))!;
    expect(row).toMatch(new RegExp(`\\s${label}\\s`));
    const id = row.split(/\s+/)[0]!;
    const show = await cli(['dlq', 'show', id]);
    expect(show.stdout).toMatch(new RegExp(`position:\\s+${label}, record index`));
    const exported = await cli(['dlq', 'export', '--csv', '--job', job]);
    expect(exported.stdout.split('\r\n')[1]).toContain(`,${label},`);
  });
});
