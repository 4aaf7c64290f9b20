import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as planMain } from '../../src/cli/plan.ts';
import { replayDeadLetters } from '../../src/cli/dlq-replay.ts';
import { captureIo } from '../helpers/capture-io.ts';
import { PG_URL, pgQuery } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const SCHEMA = `rb_pull_${process.pid}`;

describe('dead-letter replay and the pull direction', () => {
  let h: Harness;
  let ws: string;

  beforeAll(async () => {
    h = await createHarness('replay', {}, { EXPORT_DB: PG_URL });
    ws = h.createWorksheet({
      name: 'Tickets',
      alias: 'tickets',
      fields: [
        { name: 'Ticket', alias: 'ticket', type: '2', required: true, isTitle: true },
        {
          name: 'Status',
          alias: 'status',
          type: '11',
          options: [
            { value: 'Open', index: 1 },
            { value: 'Closed', index: 2 },
          ],
        },
      ],
    });
    await pgQuery(`CREATE SCHEMA ${SCHEMA}`);
  });
  afterAll(async () => {
    await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await h.close();
  });

  const job = (createOptions: boolean) => `name: tickets
source: { type: csv, path: ./tickets.csv }
target: { worksheet: tickets, mode: upsert, key: ticket }
fields:
  ticket: Ticket
  status: { from: Status${createOptions ? ', createOptions: true' : ''} }
`;

  it('replays dead letters with the fixed mapping: they land and leave the store', async () => {
    await h.writeFile('tickets.csv', 'Ticket,Status\nT-1,Open\nT-2,Escalated\nT-3,closed\nT-4,Escalated\n');
    await h.writeJob('tickets', job(false));
    const first = await h.runJob('tickets');
    expect(first.report).toMatchObject({ created: 2, deadLetteredTotal: 2 });
    expect(await h.rt.deadLetters.counts({ job: 'tickets' })).toEqual({ 'invalid-row': 2 });

    // The fix: let the job create the missing option; then replay what was dead-lettered.
    await h.writeJob('tickets', job(true));
    await h.workers?.close();
    h.workers = undefined;
    const io = captureIo(h.env);
    const code = await replayDeadLetters({ filter: { category: 'invalid-row', job: 'tickets' } }, io);
    expect(code).toBe(0);
    expect(io.all.join('\n')).toMatch(/created\s+2/);
    const rows = new Map(h.emulator.state.rows(ws).map((r) => [String(r.values.ticket), r.text.status]));
    expect(rows).toEqual(
      new Map([
        ['T-1', 'Open'],
        ['T-2', 'Escalated'],
        ['T-3', 'Closed'],
        ['T-4', 'Escalated'],
      ]),
    );
    expect(await h.rt.deadLetters.counts({ job: 'tickets' })).toEqual({});
  });

  it('pulls the worksheet out to a postgres table (upsert by key) and to an ndjson file', async () => {
    await h.writeJob(
      'tickets-export',
      `name: tickets-export
source: { type: worksheet, worksheet: ${ws} }
sink: { type: postgres, urlEnv: EXPORT_DB, table: ${SCHEMA}.tickets, key: ticket, createTable: true }
fields: { ticket: ticket, status: status }
`,
    );
    const planIo = captureIo(h.env);
    expect(await planMain(['tickets-export', '--json'], planIo)).toBe(0);
    expect(JSON.parse(planIo.all.join(''))).toEqual({ read: 4, write: 4, sink: 'postgres' });
    const first = await h.runJob('tickets-export');
    expect(first.record.status).toBe('completed');
    expect(first.report.created).toBe(4);
    const again = await h.runJob('tickets-export');
    expect(again.record.status).toBe('completed');
    const rows = await pgQuery<{ ticket: string }>(`SELECT ticket FROM ${SCHEMA}.tickets ORDER BY ticket`);
    expect(rows.map((r) => r.ticket)).toEqual(['T-1', 'T-2', 'T-3', 'T-4']);

    await h.writeJob(
      'tickets-file',
      `name: tickets-file
source: { type: worksheet, worksheet: ${ws} }
sink: { type: ndjson, path: ./tickets-out.ndjson }
fields: { ticket: ticket }
`,
    );
    await h.runJob('tickets-file');
    const lines = (await readFile(path.join(h.dir, 'tickets-out.ndjson'), 'utf8')).trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { ticket: string }).ticket).sort()).toEqual([
      'T-1',
      'T-2',
      'T-3',
      'T-4',
    ]);
  });
});
