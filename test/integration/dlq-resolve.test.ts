import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as dlq } from '../../src/cli/dlq.ts';
import { formatReport } from '../../src/cli/format-report.ts';
import type { DeadLetterEntry } from '../../src/sync/state/dead-letter-entry.ts';
import { captureIo } from '../helpers/capture-io.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/** Issue 13.2: a dead letter leaves the store when its row lands later, by any path. */
describe('dead letters resolved by their row landing', () => {
  let h: Harness;
  let sheet: string;

  const csv = (rows: string[]) => `no,amount\n${rows.join('\n')}\n`;
  const entries = async (): Promise<DeadLetterEntry[]> => {
    const out: DeadLetterEntry[] = [];
    for await (const e of h.rt.deadLetters.iterate({ job: 'orders' })) out.push(e);
    return out;
  };
  const landed = () => new Map(h.emulator.state.rows(sheet).map((r) => [String(r.values.no), r.values]));

  beforeAll(async () => {
    h = await createHarness('dlqresolve');
    sheet = h.createWorksheet({
      name: 'Orders',
      alias: 'orders',
      fields: [
        { name: 'No', alias: 'no', type: 'Text', required: true, isTitle: true },
        { name: 'Amount', alias: 'amount', type: 'Number' },
      ],
    });
    await h.writeJob(
      'orders',
      `name: orders
source: { type: csv, path: ./orders.csv }
target: { worksheet: orders, mode: upsert, key: no }
fields: { no: no, amount: amount }
`,
    );
  });
  afterAll(async () => {
    await h.close();
  });

  it('a run after the source was fixed resolves the entries of rows that now land, and says so', async () => {
    await h.writeFile('orders.csv', csv(['O-1,10', 'O-2,ten', 'O-3,12', 'O-4,four']));
    const first = await h.runJob('orders');
    expect(first.report).toMatchObject({ created: 2, deadLetteredTotal: 2, resolved: 0 });
    expect((await entries()).map((e) => e.key).sort()).toEqual(['O-2', 'O-4']);

    // O-2 is fixed at the source, and moves to another line; O-4 is still wrong.
    await h.writeFile('orders.csv', csv(['O-0,1', 'O-1,10', 'O-2,11', 'O-3,12', 'O-4,four']));
    const second = await h.runJob('orders');
    expect(second.report).toMatchObject({ created: 2, unchanged: 2, deadLetteredTotal: 1, resolved: 1 });
    expect(landed().get('O-2')).toMatchObject({ amount: 11 });
    const left = await entries();
    expect(left.map((e) => [e.key, e.runId])).toEqual([['O-4', second.record.runId]]);
    expect(formatReport(second.record, second.report)).toContain(
      'resolved 1 dead letter (their rows landed)',
    );
    expect(formatReport(first.record, first.report)).not.toContain('resolved');

    // Nothing left to resolve: a row landing again (unchanged) counts nothing twice.
    const third = await h.runJob('orders');
    expect(third.report).toMatchObject({ unchanged: 4, deadLetteredTotal: 1, resolved: 0 });
  }, 60_000);

  it('a row back to the content last written (unchanged) resolves its entry', async () => {
    await h.writeFile('orders.csv', csv(['O-9,9']));
    await h.runJob('orders');
    await h.writeFile('orders.csv', csv(['O-9,nine']));
    expect((await h.runJob('orders')).report).toMatchObject({ deadLetteredTotal: 1 });
    await h.writeFile('orders.csv', csv(['O-9,9']));
    expect((await h.runJob('orders')).report).toMatchObject({ unchanged: 1, resolved: 1 });
    expect((await entries()).map((e) => e.key)).not.toContain('O-9');
  }, 60_000);

  it('counts one resolution once however often the same landing is reported (a retried batch)', async () => {
    const [o4] = await entries();
    const runs = await h.rt.runs.list({ job: 'orders', limit: 1 });
    const runId = `${runs[0]!.runId}-later`;
    const tallyKey = h.rt.runs.tallyKey(runId);
    const again = { job: 'orders', runId, tallyKey, identities: ['key:O-4', 'key:O-99'] };
    expect(await h.rt.deadLetters.resolve(again)).toBe(1);
    expect(await h.rt.deadLetters.resolve(again)).toBe(0);
    expect((await h.rt.runs.report(runId)).resolved).toBe(1);
    expect(await h.rt.deadLetters.get(o4!.id)).toBeUndefined();
    // The row index holds nothing for a removed entry.
    expect(await h.rt.redis.hlen(`${h.rt.statePrefix}:dlq:row:orders`)).toBe(0);
  });

  it('indexes entries stored before the row index, so their row landing resolves them too', async () => {
    await h.writeFile('orders.csv', csv(['O-7,seven']));
    await h.runJob('orders');
    const old = (await entries()).find((e) => e.key === 'O-7')!;
    // As an older version stored it: no key, no row index.
    const { key: _key, ...unkeyed } = old;
    await h.rt.redis.hset(`${h.rt.statePrefix}:dlq:entries`, old.id, JSON.stringify(unkeyed));
    await h.rt.redis.hdel(`${h.rt.statePrefix}:dlq:row:orders`, 'key:O-7');

    // O-7 is fixed and lands, but nothing finds its entry yet; O-8 fails, so the run's
    // finalizer reads the job's entries and indexes the old one.
    await h.writeFile('orders.csv', csv(['O-7,7', 'O-8,eight']));
    const fixed = await h.runJob('orders');
    expect(fixed.report).toMatchObject({ created: 1, resolved: 0 });
    expect(await h.rt.deadLetters.get(old.id)).toMatchObject({ key: 'O-7' });
    // The row's next landing resolves it.
    await h.writeFile('orders.csv', csv(['O-7,70', 'O-8,eight']));
    const next = await h.runJob('orders');
    expect(next.report).toMatchObject({ updated: 1, resolved: 1 });
    expect((await entries()).map((e) => e.key)).toEqual(['O-8']);
  }, 60_000);

  it('a replay that fails again keeps the entry id; one that lands resolves it', async () => {
    await h.rt.deadLetters.purge({ job: 'orders' });
    await h.writeFile('orders.csv', csv(['O-5,five']));
    await h.runJob('orders');
    const [entry] = await entries();
    expect(entry?.key).toBe('O-5');
    const io = captureIo({ ...h.env });
    io.cwd = h.dir;
    expect(await dlq(['replay', entry!.id], io)).toBe(2);
    expect(await dlq(['replay', entry!.id], io)).toBe(2);
    const after = await entries();
    expect(after.map((e) => e.id)).toEqual([entry!.id]);
    expect(after[0]!.runId).not.toBe(entry!.runId);
    expect(after[0]!.message).toContain('amount');
    expect(await h.rt.redis.hget(`${h.rt.statePrefix}:dlq:row:orders`, 'key:O-5')).toBe(entry!.id);

    // Fixed by hand in the store's record: the replay lands it and resolves it, once.
    await h.rt.deadLetters.replaceSource([{ id: entry!.id, data: { no: 'O-5', amount: '5' } }]);
    const out = captureIo({ ...h.env });
    out.cwd = h.dir;
    expect(await dlq(['replay', entry!.id], out)).toBe(0);
    expect(out.stdout.join('\n')).toContain('resolved 1 dead letter');
    expect(await entries()).toEqual([]);
    expect(landed().get('O-5')).toMatchObject({ amount: 5 });
  }, 60_000);
});
