import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHookInbox } from '../../src/queue/hook-inbox.ts';
import { until } from '../helpers/cli-process.ts';
import { HOOK_TOKEN, startHookServer } from '../helpers/hook-server.ts';
import type { HookServer } from '../helpers/hook-server.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/** Issue 26 §1: webhook calls name rows; a worker writes them without waiting for a schedule. */
describe('webhooks: POST /hooks/JOB on the worker ops server', () => {
  let h: Harness;
  let hooks: HookServer;
  let source: string;
  let orders: string;
  let mirrored: string;
  let feed: string;

  const rowsOf = (ws: string) => h.emulator.state.rows(ws).map((r) => r.values);
  const writesTo = (ws: string) =>
    h.emulator.requests.filter(
      (r) => r.method !== 'GET' && r.path.includes(`/worksheets/${ws}/rows`) && !r.path.endsWith('/list'),
    ).length;

  async function sourceRows(values: Array<[string, string]>): Promise<string[]> {
    const ids: string[] = [];
    const client = h.rt.clientFor();
    for (let i = 0; i < values.length; i += 1000) {
      const { rowIds } = await client.rows.batchCreate(source, {
        rows: values.slice(i, i + 1000).map(([no, amount]) => ({
          fields: [
            { id: 'no', value: no },
            { id: 'amount', value: amount },
          ],
        })),
        triggerWorkflow: false,
      });
      ids.push(...rowIds);
    }
    return ids;
  }

  beforeAll(async () => {
    h = await createHarness('hooks', {}, { ROWBRIDGE_HOOK_TOKEN: HOOK_TOKEN });
    const fields = (amountType: string) => [
      { name: 'No', alias: 'no', type: 'Text', required: true, isTitle: true },
      { name: 'Amount', alias: 'amount', type: amountType },
    ];
    source = h.createWorksheet({ name: 'Incoming', alias: 'incoming', fields: fields('Text') });
    orders = h.createWorksheet({ name: 'Orders', alias: 'orders', fields: fields('Number') });
    mirrored = h.createWorksheet({ name: 'Mirrored', alias: 'mirrored', fields: fields('Number') });
    feed = h.createWorksheet({ name: 'Feed', alias: 'feed', fields: fields('Number') });
    await h.writeJob(
      'copy',
      `name: copy
source: { type: worksheet, worksheet: incoming }
target: { worksheet: orders, mode: upsert, key: no }
fields: { no: no, amount: amount }
trigger: { webhook: { debounceMs: 100 } }
`,
    );
    await h.writeJob(
      'mirror',
      `name: mirror
source: { type: worksheet, worksheet: incoming }
target: { worksheet: mirrored, mode: mirror, key: no }
fields: { no: no, amount: amount }
trigger: { webhook: true }
`,
    );
    await h.writeJob(
      'feed',
      `name: feed
source: { type: http, url: "http://127.0.0.1:9/never-called" }
target: { worksheet: feed, mode: upsert, key: no }
fields: { no: order_no, amount: total }
trigger: { webhook: true }
`,
    );
    await h.writeJob(
      'nohook',
      `name: nohook
source: { type: worksheet, worksheet: incoming }
target: { worksheet: orders, mode: upsert, key: no }
fields: { no: no, amount: amount }
`,
    );
    h.startWorkers();
    hooks = await startHookServer(h);
  }, 60_000);
  afterAll(async () => {
    await hooks?.close();
    await h?.close();
  });

  it('writes each hinted row, read from the source, without a schedule or enqueue', async () => {
    const ids = await sourceRows([
      ['H-1', '1'],
      ['H-2', '2'],
      ['H-3', '3'],
    ]);
    for (const id of ids) {
      const answer = await hooks.post('copy', { rowId: id });
      expect(answer.status).toBe(202);
      expect(answer.body).toMatchObject({ queued: 1 });
      expect(typeof answer.body.deliveryId).toBe('string');
    }
    await until(() => rowsOf(orders).length === 3, 20_000, 'three rows in Orders');
    expect(
      rowsOf(orders)
        .map((r) => [r.no, r.amount])
        .sort(),
    ).toEqual([
      ['H-1', 1],
      ['H-2', 2],
      ['H-3', 3],
    ]);
    // A hint is a hint: a changed row is read as the source has it now.
    await h.rt.clientFor().rows.update(source, ids[0]!, {
      fields: [{ id: 'amount', value: '10' }],
      triggerWorkflow: false,
    });
    expect((await hooks.post('copy', { rowIds: [ids[0]] })).status).toBe(202);
    await until(() => rowsOf(orders).some((r) => r.no === 'H-1' && r.amount === 10), 20_000, 'H-1 updated');
    expect(await hooks.metrics()).toMatch(/rowbridge_hooks_received_total\{job="copy"\} 4/);
  }, 60_000);

  it('writes a delivery sent 10 times once', async () => {
    const [id] = await sourceRows([['D-1', '5']]);
    const before = writesTo(orders);
    const answers = [];
    for (let i = 0; i < 10; i += 1)
      answers.push(
        await hooks.post('copy', { rowId: id }, { 'x-rowbridge-token': HOOK_TOKEN, 'webhook-id': 'msg_d1' }),
      );
    expect(answers.map((a) => a.status)).toEqual([202, 200, 200, 200, 200, 200, 200, 200, 200, 200]);
    expect(answers[1]!.body).toEqual({ duplicate: true, deliveryId: 'msg_d1' });
    // The job page lists each call, newest first: the duplicates as such.
    const calls = (
      await createHookInbox({ redis: h.rt.redis, prefix: h.rt.statePrefix }).recent('copy')
    ).filter((c) => c.deliveryId === 'msg_d1');
    expect(calls.map((c) => [c.status, c.reason])).toEqual([
      ...Array.from({ length: 9 }, () => [200, 'duplicate']),
      [202, undefined],
    ]);
    await until(() => rowsOf(orders).some((r) => r.no === 'D-1'), 20_000, 'D-1 landed');
    await new Promise((r) => setTimeout(r, 1000));
    expect(rowsOf(orders).filter((r) => r.no === 'D-1')).toHaveLength(1);
    expect(writesTo(orders) - before).toBe(1);
  }, 60_000);

  it('deletes in a mirror job the row a hint names that the source no longer has', async () => {
    const [keep, drop] = await sourceRows([
      ['M-1', '1'],
      ['M-2', '2'],
    ]);
    expect((await hooks.post('mirror', { rowIds: [keep, drop] })).status).toBe(202);
    await until(() => rowsOf(mirrored).length === 2, 20_000, 'two rows in Mirrored');
    await h.rt.clientFor().rows.delete(source, drop!, { triggerWorkflow: false });
    expect((await hooks.post('mirror', { rowId: drop })).status).toBe(202);
    await until(() => rowsOf(mirrored).length === 1, 20_000, 'M-2 deleted from Mirrored');
    expect(rowsOf(mirrored).map((r) => r.no)).toEqual(['M-1']);
  }, 60_000);

  it('writes the records a call carries for an http-style job', async () => {
    const answer = await hooks.post('feed', [
      { order_no: 'F-1', total: 7 },
      { order_no: 'F-2', total: 8 },
    ]);
    expect(answer).toMatchObject({ status: 202, body: { queued: 2 } });
    await until(() => rowsOf(feed).length === 2, 20_000, 'two rows in Feed');
    expect(
      rowsOf(feed)
        .map((r) => [r.no, r.amount])
        .sort(),
    ).toEqual([
      ['F-1', 7],
      ['F-2', 8],
    ]);
  }, 60_000);

  it('refuses a body that is not valid with 400 and the reason, an unknown job with 404', async () => {
    expect(await hooks.post('copy', 'not json')).toEqual({
      status: 400,
      body: { error: 'the body is not JSON' },
    });
    const unknown = await hooks.post('copy', { rowId: 'x', extra: 1 });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(/unknown key "extra"/);
    const big = await hooks.post('copy', {
      rowIds: Array.from({ length: 100_000 }, (_, i) => `row-id-${i}`),
    });
    expect(big).toEqual({ status: 400, body: { error: 'the body is over 1 MiB' } });
    expect((await hooks.post('nohook', { rowId: 'x' })).status).toBe(404);
    expect((await hooks.post('nosuchjob', { rowId: 'x' })).status).toBe(404);
  });

  it('writes a burst of 5,000 hints once each, in full batches', async () => {
    const values = Array.from({ length: 5000 }, (_, i): [string, string] => [`B-${i}`, String(i)]);
    const ids = await sourceRows(values);
    const before = writesTo(orders);
    const had = rowsOf(orders).length;
    let next = 0;
    const statuses: number[] = [];
    // 20 callers at once, as a workflow fanning out an import would.
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < ids.length) {
          const id = ids[next++]!;
          statuses.push((await hooks.post('copy', { rowId: id })).status);
        }
      }),
    );
    expect(statuses.filter((s) => s === 202)).toHaveLength(5000);
    await until(() => rowsOf(orders).length === had + 5000, 120_000, '5,000 burst rows in Orders');
    await new Promise((r) => setTimeout(r, 1500));
    const burst = rowsOf(orders).filter((r) => String(r.no).startsWith('B-'));
    expect(new Set(burst.map((r) => r.no)).size).toBe(5000);
    expect(burst).toHaveLength(5000);
    // The write floor is 5,000 / 100 = 50 requests.
    expect(writesTo(orders) - before).toBeLessThanOrEqual(55);
  }, 180_000);
});
