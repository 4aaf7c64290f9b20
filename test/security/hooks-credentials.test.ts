import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueues } from '../../src/queue/queues.ts';
import { HOOK_SECRET, HOOK_TOKEN, startHookServer } from '../helpers/hook-server.ts';
import type { HookServer } from '../helpers/hook-server.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/** Issue 26 §1: a hook without the right credential is refused with 401 and queues nothing. */
describe('webhook credentials', () => {
  let h: Harness;
  let hooks: HookServer;
  let rowId: string;
  let orders: string;

  const signed = (body: string, secret = HOOK_SECRET, at = new Date(), id = `msg_${Math.random()}`) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  });

  /** Nothing pending in Redis, no run queued, no row written. */
  async function nothingQueued(job: string): Promise<void> {
    expect(await h.rt.redis.scard(`${h.rt.statePrefix}:hooks:${job}:pending`)).toBe(0);
    const queues = createQueues(h.rt);
    try {
      const counts = await queues.runs.getJobCounts('waiting', 'delayed', 'active', 'completed', 'failed');
      expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(0);
    } finally {
      await queues.close();
    }
    expect(h.emulator.state.rowCount(orders)).toBe(0);
  }

  beforeAll(async () => {
    h = await createHarness(
      'hookauth',
      {},
      {
        ROWBRIDGE_HOOK_TOKEN: HOOK_TOKEN,
        ROWBRIDGE_HOOK_SECRET: HOOK_SECRET,
        OTHER_HOOK_SECRET: HOOK_SECRET,
      },
    );
    const fields = [
      { name: 'No', alias: 'no', type: 'Text', required: true, isTitle: true },
      { name: 'Amount', alias: 'amount', type: 'Text' },
    ];
    const source = h.createWorksheet({ name: 'Incoming', alias: 'incoming', fields });
    orders = h.createWorksheet({ name: 'Orders', alias: 'orders', fields });
    for (const [name, trigger] of [
      ['copy', 'true'],
      ['signedonly', '{ secretEnv: OTHER_HOOK_SECRET }'],
      ['unset', '{ tokenEnv: UNSET_HOOK_TOKEN, secretEnv: UNSET_HOOK_SECRET }'],
    ] as const) {
      await h.writeJob(
        name,
        `name: ${name}
source: { type: worksheet, worksheet: incoming }
target: { worksheet: orders, mode: upsert, key: no }
fields: { no: no, amount: amount }
trigger: { webhook: ${trigger} }
`,
      );
    }
    const { rowIds } = await h.rt.clientFor().rows.batchCreate(source, {
      rows: [{ fields: [{ id: 'no', value: 'S-1' }] }],
      triggerWorkflow: false,
    });
    rowId = rowIds[0]!;
    hooks = await startHookServer(h);
  }, 60_000);
  afterAll(async () => {
    await hooks?.close();
    await h?.close();
  });

  it('refuses a wrong token, a wrong signature, a 10-minute-old timestamp and no credential', async () => {
    const body = JSON.stringify({ rowId });
    const attempts: Array<[string, string, Record<string, string>]> = [
      ['copy', 'wrong bearer token', { authorization: 'Bearer hook-token-0123456789abcdeX' }],
      ['copy', 'wrong X-Rowbridge-Token', { 'x-rowbridge-token': 'nope' }],
      ['copy', 'signed with another secret', signed(body, 'whsec_QW5vdGhlclNlY3JldEFub3RoZXJTZWNyZXQ=')],
      ['copy', 'signed 10 minutes ago', signed(body, HOOK_SECRET, new Date(Date.now() - 10 * 60_000))],
      ['copy', 'a signature of another body', signed(JSON.stringify({ rowId: 'other' }))],
      ['copy', 'no credential', {}],
      [
        'signedonly',
        'the token to a job that takes signatures only',
        { authorization: `Bearer ${HOOK_TOKEN}` },
      ],
      ['unset', 'a job whose credential variables are unset', { authorization: `Bearer ${HOOK_TOKEN}` }],
    ];
    for (const [job, what, headers] of attempts) {
      const answer = await hooks.post(job, body, headers);
      expect(answer.status, what).toBe(401);
      expect(JSON.stringify(answer.body), what).not.toContain(HOOK_TOKEN);
      expect(JSON.stringify(answer.body), what).not.toContain(HOOK_SECRET.slice(6));
    }
    const unset = await hooks.post('unset', body, {});
    expect(unset.body.error).toBe(
      'no hook credential is configured: set UNSET_HOOK_TOKEN or UNSET_HOOK_SECRET',
    );
    await new Promise((r) => setTimeout(r, 1000));
    for (const job of ['copy', 'signedonly', 'unset']) await nothingQueued(job);
    expect(await hooks.metrics()).toMatch(/rowbridge_hooks_refused_total\{job="copy",reason="auth"\} 6/);
  }, 30_000);

  it('accepts the right signature (the control: the refusals above are the credential)', async () => {
    const body = JSON.stringify({ rowId });
    const answer = await hooks.post('signedonly', body, signed(body));
    expect(answer).toMatchObject({ status: 202, body: { queued: 1 } });
    expect(await h.rt.redis.scard(`${h.rt.statePrefix}:hooks:signedonly:pending`)).toBe(1);
  });
});
