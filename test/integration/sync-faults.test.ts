import { afterEach, describe, expect, it } from 'vitest';
import type { CreateWorksheetInput } from '../../src/api/types.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const SHEET: CreateWorksheetInput = {
  name: 'Events',
  alias: 'events',
  fields: [
    { name: 'Event id', alias: 'event_id', type: '2', required: true, isTitle: true },
    { name: 'Value', alias: 'value', type: '6' },
  ],
};

function rowsCsv(n: number, offset = 0): string {
  const lines = ['id,value'];
  for (let i = 0; i < n; i += 1) lines.push(`E-${i + offset},${i + offset}`);
  return `${lines.join('\n')}\n`;
}

function jobYaml(mode: string, key: boolean): string {
  return `name: events
source: { type: csv, path: ./events.csv }
target:
  worksheet: events
  mode: ${mode}
${key ? '  key: event_id\n' : ''}  batchSize: 100
fields:
  event_id: id
  value: value
`;
}

/** Every key of the worksheet with how many live rows hold it. */
function keyCounts(h: Harness, ws: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const row of h.emulator.state.rows(ws)) {
    const key = String(row.values.event_id);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

describe('a 10,000-row import under injected faults', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('lands every row exactly once with 5% transient, 2% ambiguous after-apply and throttling on', async () => {
    h = await createHarness(
      'faults',
      {
        faults: { seed: 42, error99999: 0.05, resetAfterApply: 0.02 },
        rateLimit: { requestsPerSecond: 25, burst: 5 },
      },
      // Start above the server's limit so the shared limiter has to find it.
      { ROWBRIDGE_RATE: '60', ROWBRIDGE_MAX_RATE: '120' },
    );
    const ws = h.createWorksheet(SHEET);
    await h.writeFile('events.csv', rowsCsv(10_000));
    await h.writeJob('events', jobYaml('upsert', true));
    const { record, report } = await h.runJob('events', {});
    expect(record.status).toBe('completed');
    expect(report.read).toBe(10_000);
    expect(report.deadLetteredTotal).toBe(0);
    expect(report.created).toBe(10_000);

    const counts = keyCounts(h, ws);
    expect(counts.size).toBe(10_000);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    // The faults really happened: transient answers were retried, throttled ones paced.
    const log = h.emulator.requests;
    expect(log.filter((r) => r.errorCode === 99999).length).toBeGreaterThan(0);
    expect(log.filter((r) => r.errorCode === 51).length).toBeGreaterThan(0);
    expect(report.retries).toBeGreaterThan(0);
    expect(report.throttled).toBeGreaterThan(0);
  }, 240_000);

  it('never doubles a keyless append whose outcome is unknown: those rows are dead-lettered as ambiguous', async () => {
    h = await createHarness('faults-append', { faults: { seed: 7, resetAfterApply: 0.2 } });
    const ws = h.createWorksheet(SHEET);
    await h.writeFile('events.csv', rowsCsv(1_000));
    await h.writeJob('events', jobYaml('append', false));
    const { report } = await h.runJob('events', {});
    const counts = keyCounts(h, ws);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(report.deadLettered.ambiguous ?? 0).toBeGreaterThan(0);
    // Every row either landed once or is in the dead-letter store: none lost, none doubled.
    expect(report.created + (report.deadLettered.ambiguous ?? 0)).toBe(1_000);
    const { entries } = await h.rt.deadLetters.list({ category: 'ambiguous', limit: 1 });
    expect(entries[0]?.message).toMatch(/no key/);
  }, 120_000);
});

describe('failures that do not mend', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('dead-letters the rows of a batch whose transient failures outlast every attempt, with their category', async () => {
    h = await createHarness(
      'faults-exhaust',
      {},
      { ROWBRIDGE_RETRIES: '1', ROWBRIDGE_BATCH_ATTEMPTS: '2', ROWBRIDGE_BATCH_BACKOFF_MS: '50' },
    );
    const ws = h.createWorksheet(SHEET);
    await h.writeFile('events.csv', rowsCsv(30));
    await h.writeJob('events', jobYaml('append', false));
    // Every write fails with 99999 from now on.
    h.emulator.setOptions({ faults: { seed: 1, error99999: 1, writesOnly: true } });
    const { record, report } = await h.runJob('events', {});
    expect(record.status).toBe('completed');
    expect(report.deadLettered).toEqual({ transient: 30 });
    expect(h.emulator.state.rowCount(ws)).toBe(0);
    const { entries } = await h.rt.deadLetters.list({ category: 'transient', limit: 1 });
    expect(entries[0]).toMatchObject({ errorCode: 99999, attempts: 2 });
    expect(entries[0]?.message).toMatch(/99999/);
  }, 60_000);

  it('stops the run with one clear message on an authentication failure, dead-lettering nothing', async () => {
    h = await createHarness('faults-auth', {}, { ROWBRIDGE_SIGN: 'wrong-sign-value' });
    h.createWorksheet(SHEET);
    await h.writeFile('events.csv', rowsCsv(500));
    await h.writeJob('events', jobYaml('append', false));
    const { record, report } = await h.runJob('events', {});
    expect(record.status).toBe('failed');
    expect(record.message).toMatch(/10102.*signature invalid/);
    expect(record.message).not.toContain('wrong-sign-value');
    expect(report.deadLetteredTotal).toBe(0);
  });
});
