import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as planMain } from '../../src/cli/plan.ts';
import { captureIo } from '../helpers/capture-io.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/** `key: [customer_no, region]`: rows are matched on the combination, never on one part. */
describe('composite keys', () => {
  let h: Harness;
  let accounts: string;

  beforeAll(async () => {
    h = await createHarness('ckey');
    accounts = h.createWorksheet({
      name: 'Accounts',
      alias: 'accounts',
      fields: [
        { name: 'Customer', alias: 'customer_no', type: 'Text', required: true, isTitle: true },
        { name: 'Region', alias: 'region', type: 'Text', required: true },
        { name: 'Owner', alias: 'owner', type: 'Text' },
      ],
    });
    await h.writeJob(
      'accounts',
      `name: accounts
source: { type: csv, path: ./accounts.csv }
target: { worksheet: accounts, mode: mirror, key: [customer_no, region], batchSize: 2 }
fields: { customer_no: customer, region: region, owner: owner }
options: { deleteThreshold: 0.5 }
`,
    );
  });
  afterAll(async () => {
    await h.close();
  });

  const landed = () =>
    h.emulator.state
      .rows(accounts)
      .map((r) => `${String(r.values.customer_no)}/${String(r.values.region)}=${String(r.values.owner)}`)
      .sort();

  it('creates one row per combination, even when a part repeats', async () => {
    await h.writeFile(
      'accounts.csv',
      'customer,region,owner\nC-1,north,Ann\nC-1,south,Bo\nC-2,north,Cy\nC-2,south,Di\n',
    );
    const { report } = await h.runJob('accounts');
    expect(report).toMatchObject({ created: 4, deadLetteredTotal: 0 });
    expect(landed()).toEqual(['C-1/north=Ann', 'C-1/south=Bo', 'C-2/north=Cy', 'C-2/south=Di']);
  });

  it('plans and writes only the changed combination, and mirrors a missing one away', async () => {
    await h.writeFile('accounts.csv', 'customer,region,owner\nC-1,north,Ann\nC-1,south,Eve\nC-2,north,Cy\n');
    const io = captureIo(h.env);
    expect(await planMain(['accounts', '--json'], io)).toBe(0);
    expect(JSON.parse(io.stdout.join(''))).toMatchObject({
      read: 3,
      create: 0,
      update: 1,
      unchanged: 2,
      delete: 1,
    });
    const { report } = await h.runJob('accounts');
    expect(report).toMatchObject({ created: 0, updated: 1, unchanged: 2, deleted: 1 });
    expect(landed()).toEqual(['C-1/north=Ann', 'C-1/south=Eve', 'C-2/north=Cy']);
  });

  it('a repeated combination in the source is refused as a duplicate key; the same customer in another region is not', async () => {
    await h.writeFile(
      'accounts.csv',
      'customer,region,owner\nC-1,north,Ann\nC-1,south,Eve\nC-2,north,Cy\nC-2,north,Zed\n',
    );
    const { report } = await h.runJob('accounts');
    expect(report).toMatchObject({ created: 0, updated: 0, unchanged: 3, deadLetteredTotal: 1 });
    const { entries } = await h.rt.deadLetters.list({ job: 'accounts' });
    expect(entries.map((e) => e.message)).toEqual([expect.stringMatching(/customer_no \+ region/)]);
  });

  it('a run that lost its index still finds every combination on the worksheet: nothing is created twice', async () => {
    await h.rt.redis.del(`${h.rt.statePrefix}:index:accounts`);
    await h.writeFile('accounts.csv', 'customer,region,owner\nC-1,north,Ann\nC-1,south,Eve\nC-2,north,Cy\n');
    const { report } = await h.runJob('accounts');
    expect(report).toMatchObject({ created: 0, deadLetteredTotal: 0 });
    expect(landed()).toEqual(['C-1/north=Ann', 'C-1/south=Eve', 'C-2/north=Cy']);
  });

  it('creates whose answer was lost are reconciled by the combination: each lands once', async () => {
    // Every write is applied, then its connection dropped: the client cannot know, and
    // the writer looks the rows up by their (customer, region) pairs.
    h.emulator.setOptions({ faults: { seed: 7, resetAfterApply: 1, writesOnly: true } });
    await h.writeFile(
      'accounts.csv',
      'customer,region,owner\nC-1,north,Ann\nC-1,south,Eve\nC-2,north,Cy\nC-3,north,Fay\nC-3,south,Gus\n',
    );
    const { report } = await h.runJob('accounts');
    h.emulator.setOptions({ faults: undefined });
    expect(report).toMatchObject({ created: 2, deadLetteredTotal: 0 });
    expect(landed()).toEqual([
      'C-1/north=Ann',
      'C-1/south=Eve',
      'C-2/north=Cy',
      'C-3/north=Fay',
      'C-3/south=Gus',
    ]);
  });
});
