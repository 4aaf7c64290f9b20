import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as dlq } from '../../src/cli/dlq.ts';
import type { DeadLetterEntry } from '../../src/sync/state/dead-letter-entry.ts';
import { captureIo } from '../helpers/capture-io.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/** Issue 13.2: a worksheet source is read again by row id when its dead letters are replayed. */
describe('dlq replay re-reads a worksheet source by row id', () => {
  let h: Harness;
  let target: string;
  let source: string;

  const entries = async (): Promise<DeadLetterEntry[]> => {
    const out: DeadLetterEntry[] = [];
    for await (const e of h.rt.deadLetters.iterate({ job: 'copy' })) out.push(e);
    return out;
  };

  beforeAll(async () => {
    h = await createHarness('dlqsrcws');
    source = h.createWorksheet({
      name: 'Incoming',
      alias: 'incoming',
      fields: [
        { name: 'No', alias: 'no', type: 'Text', required: true, isTitle: true },
        { name: 'Amount', alias: 'amount', type: 'Text' },
      ],
    });
    target = h.createWorksheet({
      name: 'Orders',
      alias: 'orders',
      fields: [
        { name: 'No', alias: 'no', type: 'Text', required: true, isTitle: true },
        { name: 'Amount', alias: 'amount', type: 'Number' },
      ],
    });
    await h.writeJob(
      'copy',
      `name: copy
source: { type: worksheet, worksheet: incoming }
target: { worksheet: orders, mode: upsert, key: no }
fields: { no: no, amount: amount }
`,
    );
  });
  afterAll(async () => {
    await h?.close();
  });

  it('replays the row as the worksheet has it now', async () => {
    const client = h.rt.clientFor();
    const { rowIds } = await client.rows.batchCreate(source, {
      rows: [
        {
          fields: [
            { id: 'no', value: 'W-1' },
            { id: 'amount', value: '1' },
          ],
        },
        {
          fields: [
            { id: 'no', value: 'W-2' },
            { id: 'amount', value: 'two' },
          ],
        },
      ],
      triggerWorkflow: false,
    });
    const first = await h.runJob('copy');
    expect(first.report).toMatchObject({ created: 1, deadLetteredTotal: 1 });
    const [w2] = await entries();
    expect(w2?.source.position.id).toBe(rowIds[1]);

    await client.rows.update(source, rowIds[1]!, {
      fields: [{ id: 'amount', value: '2' }],
      triggerWorkflow: false,
    });
    const io = captureIo({ ...h.env });
    io.cwd = h.dir;
    expect(await dlq(['replay', w2!.id], io)).toBe(0);
    expect(io.stdout.join('\n')).toContain('resolved 1 dead letter');
    const landed = new Map(h.emulator.state.rows(target).map((r) => [String(r.values.no), r.values]));
    expect(landed.get('W-2')).toMatchObject({ amount: 2 });
    expect(await entries()).toEqual([]);
  }, 60_000);
});
