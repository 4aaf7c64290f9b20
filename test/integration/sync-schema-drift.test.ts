import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOperation } from '../../src/api/resources/build-operation.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/** The worksheet changes under a job between runs: the next run fails before writing, naming what changed. */
describe('schema drift', () => {
  let h: Harness;
  let sheet: string;

  beforeAll(async () => {
    h = await createHarness('drift');
    sheet = h.createWorksheet({
      name: 'Customers',
      alias: 'customers',
      fields: [
        { name: 'No', alias: 'no', type: 'Text', required: true, isTitle: true },
        { name: 'Spend', alias: 'spend', type: 'Number' },
      ],
    });
    await h.writeFile('c.csv', 'no,spend\nC-1,10\nC-2,20\n');
    await h.writeJob(
      'customers',
      `name: customers
source: { type: csv, path: ./c.csv }
target: { worksheet: customers, mode: upsert, key: no }
fields: { no: no, spend: spend }
`,
    );
  });
  afterAll(async () => {
    await h.close();
  });

  it('a mapped field deleted since the last successful run fails the next run before its first write', async () => {
    expect((await h.runJob('customers')).record.status).toBe('completed');
    const spend = h.emulator.state.worksheet(sheet)!.fields.find((f) => f.alias === 'spend')!.id;
    // The seed spec's structure path: the emulator serves it in both dialects.
    await h.rt.clientFor().call(
      buildOperation('POST', `/v3/app/worksheets/${sheet}/structure`, true, {
        body: { removeFields: [spend] },
      }),
    );
    await h.writeFile('c.csv', 'no,spend\nC-1,11\nC-3,30\n');
    const writes = () =>
      h.emulator.requests.filter(
        (r) => r.method !== 'GET' && r.path.includes('/rows') && !r.path.endsWith('/list'),
      ).length;
    const before = writes();
    const { record } = await h.runJob('customers');
    expect(record.status).toBe('failed');
    expect(record.message).toContain(
      "worksheet Customers changed since the job's last successful run; nothing was written",
    );
    expect(record.message).toMatch(
      /spend: field "Spend" \(\w+\) was deleted from the worksheet since the last successful run/,
    );
    expect(writes()).toBe(before);
    expect(h.emulator.state.rowCount(sheet)).toBe(2);
  });

  it('once the mapping is edited to fit, the job runs again', async () => {
    await h.writeJob(
      'customers',
      `name: customers
source: { type: csv, path: ./c.csv }
target: { worksheet: customers, mode: upsert, key: no }
fields: { no: no }
`,
    );
    const { record, report } = await h.runJob('customers');
    expect(record.status).toBe('completed');
    expect(report).toMatchObject({ created: 1 });
  });
});
