import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, pgQuery } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const SCHEMA = `rb_time_${process.pid}`;

/**
 * The organisation's clock (ROWBRIDGE_PLATFORM_TIMEZONE, default Asia/Shanghai, the
 * public platform's): values land as its wall clock whatever zone the source carries,
 * and the platform's zone-less timestamps drive incremental pulls to the second.
 */
describe("the organisation's time zone", () => {
  let h: Harness;
  let events: string;
  let clock = Date.parse('2025-06-01T00:00:00Z');

  beforeAll(async () => {
    h = await createHarness('ptime', { now: () => clock }, { EVENTS_DB: PG_URL });
    events = h.createWorksheet({
      name: 'Events',
      alias: 'events',
      fields: [
        { name: 'Code', alias: 'code', type: 'Text', required: true, isTitle: true },
        { name: 'Starts', alias: 'starts', type: 'DateTime' },
        { name: 'Day', alias: 'day', type: 'Date' },
        { name: 'Note', alias: 'note', type: 'Text' },
      ],
    });
    await pgQuery(`CREATE SCHEMA ${SCHEMA}`);
  });
  afterAll(async () => {
    await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await h.close();
  });

  const landed = () => new Map(h.emulator.state.rows(events).map((r) => [String(r.values.code), r.values]));

  it('writes offset timestamps from a CSV as the organisation wall clock (Asia/Shanghai)', async () => {
    await h.writeFile(
      'events.csv',
      [
        'code,starts,day',
        'E-1,2025-03-14T01:30:00Z,2025-03-14T20:00:00-05:00',
        'E-2,2025-03-14T09:30:00+08:00,2025-03-14',
        'E-3,2025-03-14 09:30:00,2025-03-14T15:59:59Z',
      ].join('\n') + '\n',
    );
    await h.writeJob(
      'events-csv',
      `name: events-csv
source: { type: csv, path: ./events.csv }
target: { worksheet: events, mode: upsert, key: code }
fields: { code: code, starts: starts, day: day }
`,
    );
    const { report } = await h.runJob('events-csv');
    expect(report).toMatchObject({ created: 3, deadLetteredTotal: 0 });
    const rows = landed();
    expect(rows.get('E-1')).toMatchObject({ starts: '2025-03-14 09:30:00', day: '2025-03-15' });
    expect(rows.get('E-2')).toMatchObject({ starts: '2025-03-14 09:30:00', day: '2025-03-14' });
    // Zone-less: the mapping's timezone (none set: UTC) → 17:30 in Shanghai.
    expect(rows.get('E-3')).toMatchObject({ starts: '2025-03-14 17:30:00', day: '2025-03-14' });
  });

  it('reads a zone-less database timestamp in the mapping timezone, not the process zone', async () => {
    await pgQuery(`CREATE TABLE ${SCHEMA}.events (code text PRIMARY KEY, starts timestamp, day date)`);
    await pgQuery(`INSERT INTO ${SCHEMA}.events VALUES ('E-9', '2025-03-14 09:30:00', '2025-03-14')`);
    await h.writeJob(
      'events-db',
      `name: events-db
source: { type: postgres, urlEnv: EVENTS_DB, allowPrivilegedSource: true, table: ${SCHEMA}.events, cursorColumn: code }
target: { worksheet: events, mode: upsert, key: code }
fields:
  code: code
  starts: { from: starts, timezone: America/New_York }
  day: day
`,
    );
    const { report } = await h.runJob('events-db');
    expect(report).toMatchObject({ created: 1, deadLetteredTotal: 0 });
    // 09:30 in New York (EDT, UTC-4) is 13:30 UTC, 21:30 in Shanghai; the date stays the date.
    expect(landed().get('E-9')).toMatchObject({ starts: '2025-03-14 21:30:00', day: '2025-03-14' });
  });

  it('an incremental pull by update time delivers exactly the changed rows, run after run', async () => {
    const out = path.join(h.dir, 'changes.ndjson');
    await h.writeJob(
      'events-changes',
      `name: events-changes
source: { type: worksheet, worksheet: events }
sink: { type: ndjson, path: ./changes.ndjson }
fields: { code: code, note: note, changed: { from: _updatedAt }, by: { from: _updatedBy }, row: { from: rowid } }
incremental: { cursor: _updatedAt }
`,
    );
    const pulled = async () =>
      (await readFile(out, 'utf8'))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>);

    clock += 60_000;
    const first = await h.runJob('events-changes');
    expect(first.record.status).toBe('completed');
    const all = await pulled();
    expect(all.map((r) => r.code).sort()).toEqual(['E-1', 'E-2', 'E-3', 'E-9']);
    // A pull writes every time as the organisation's wall clock by default (timeFormat: wall,
    // issue 23 §3): 00:00 UTC is 08:00 in Asia/Shanghai.
    expect(all[0]).toMatchObject({
      changed: '2025-06-01 08:00:00',
      by: expect.any(String),
    });
    expect(all.every((r) => typeof r.row === 'string' && r.row !== '')).toBe(true);

    // One second later, two rows change; the next pull brings exactly those two.
    clock += 1_000;
    const client = h.rt.clientFor();
    const ids = new Map(all.map((r) => [r.code, r.row as string]));
    await client.rows.batchUpdate(events, {
      rowIds: [ids.get('E-2')!, ids.get('E-9')!],
      fields: [{ id: 'note', value: 'moved' }],
    });
    clock += 60_000;
    const second = await h.runJob('events-changes');
    expect(second.record.status).toBe('completed');
    const afterSecond = await pulled();
    // Merged by the column mapped from rowid: the two changed rows replace themselves.
    expect(afterSecond).toHaveLength(all.length);
    expect(
      afterSecond
        .filter((r) => r.note === 'moved')
        .map((r) => [r.code, r.note, r.changed])
        .sort(),
    ).toEqual([
      ['E-2', 'moved', '2025-06-01 08:01:01'],
      ['E-9', 'moved', '2025-06-01 08:01:01'],
    ]);

    // Nothing changed since: a third pull writes nothing.
    const third = await h.runJob('events-changes');
    expect(third.record.status).toBe('completed');
    expect(await pulled()).toHaveLength(afterSecond.length);
  });
});
