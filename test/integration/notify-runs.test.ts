/**
 * Issue 27 §1 and §2 end to end: a local HTTP server receives, verifies (Standard
 * Webhooks) and counts the notifications of real runs worked by real workers: a failed
 * run, a run with dead letters, a recovery, a stale job, the cooldown holding repeats
 * back; a run whose counts were tampered with fails; each expectation fails a run and
 * notifies; `run` exits 3 on an unmet expectation and delivers its own notification.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Worker } from 'bullmq';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createNotifyWorker } from '../../src/queue/notify-worker.ts';
import type { NotifyJobData } from '../../src/queue/notify-queue.ts';
import { checkStaleJobs } from '../../src/queue/stale-check.ts';
import type { NotificationPayload } from '../../src/sync/notify/notification-payload.ts';
import { killChildren, spawnCli, until } from '../helpers/cli-process.ts';
import { startRecordingServer } from '../helpers/recording-server.ts';
import type { RecordingServer } from '../helpers/recording-server.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const SECRET = `whsec_${Buffer.from('rowbridge-notify-test-secret-32b').toString('base64')}`;
const COOLDOWN_MS = 3_000;

describe('notifications of runs', () => {
  let h: Harness;
  let server: RecordingServer;
  let notifier: Worker<NotifyJobData>;
  const children: ChildProcess[] = [];

  /** What the server received and verified, oldest first; an unverified one fails the test. */
  const received = (): NotificationPayload[] =>
    server.requests.map((r) => {
      new Webhook(SECRET).verify(r.rawBody, r.headers as Record<string, string>);
      return r.body as NotificationPayload;
    });
  const events = (job: string) => received().filter((p) => p.job === job);
  const waitFor = (job: string, n: number) =>
    until(() => events(job).length >= n, 20_000, `${n} notifications of ${job}`);

  beforeAll(async () => {
    server = await startRecordingServer();
    server.respond(() => ({ status: 200, body: 'ok' }));
    h = await createHarness(
      'notify',
      {},
      {
        ALERTS_URL: `${server.url}/hooks/alerts`,
        ROWBRIDGE_NOTIFY_SECRET: SECRET,
        ROWBRIDGE_NOTIFY_COOLDOWN_MS: String(COOLDOWN_MS),
        ROWBRIDGE_DASHBOARD_URL: 'https://rowbridge.example/',
      },
    );
    h.createWorksheet({
      name: 'Ledger',
      alias: 'ledger',
      fields: [
        { name: 'Entry', alias: 'entry', type: '2', required: true, isTitle: true },
        { name: 'Amount', alias: 'amount', type: '6' },
      ],
    });
    h.startWorkers();
    notifier = createNotifyWorker(h.rt);
  });
  afterEach(() => killChildren(children));
  afterAll(async () => {
    await notifier?.close();
    await h?.close();
    await server?.close();
  });

  const job = async (name: string, extra: string) =>
    h.writeJob(
      name,
      `name: ${name}
source: { type: csv, path: ./${name}.csv }
target: { worksheet: ledger, mode: upsert, key: entry, batchSize: 50 }
fields: { entry: entry, amount: amount }
options: { deleteThreshold: 1 }
notify:
  - { type: webhook, url: "\${ALERTS_URL}", on: [failed, dead-letters, recovered, expectation, stale] }
${extra}`,
    );
  const csv = (name: string, rows: string[]) =>
    h.writeFile(`${name}.csv`, `entry,amount\n${rows.join('\n')}\n`);

  it('a failed run, the cooldown holding repeats back, dead letters and a recovery', async () => {
    await job('orders', '');
    const first = await h.runJob('orders');
    expect(first.record.status).toBe('failed');
    await waitFor('orders', 1);
    expect(events('orders')[0]).toMatchObject({
      event: 'failed',
      runId: first.record.runId,
      error: { category: 'config' },
      link: 'https://rowbridge.example/jobs/orders',
    });
    expect(server.requests[0]!.path).toBe('/hooks/alerts');
    // Within the cooldown: counted, not sent.
    const second = await h.runJob('orders', { fresh: true } as never);
    expect(second.record.status).toBe('failed');
    await new Promise((r) => setTimeout(r, 500));
    expect(events('orders')).toHaveLength(1);

    await csv('orders', ['O-1,10', 'O-2,not-a-number', 'O-3,30']);
    const ok = await h.runJob('orders');
    expect(ok.record.status).toBe('completed');
    await waitFor('orders', 3);
    const [dead, recovered] = [
      events('orders').find((p) => p.event === 'dead-letters')!,
      events('orders').find((p) => p.event === 'recovered')!,
    ];
    expect(dead.counts).toMatchObject({ read: 3, created: 2, deadLettered: 1 });
    expect(dead.deadLetterReasons).toHaveLength(1);
    expect(dead.deadLetterReasons![0]!.count).toBe(1);
    expect(recovered.runId).toBe(ok.record.runId);

    // The cooldown passed: the next failure is sent, saying one was held back.
    await new Promise((r) => setTimeout(r, COOLDOWN_MS));
    await rm(path.join(h.dir, 'orders.csv'));
    expect((await h.runJob('orders')).record.status).toBe('failed');
    await waitFor('orders', 4);
    expect(events('orders')[3]).toMatchObject({ event: 'failed', repeats: 1 });
  });

  it('a run whose counts were tampered with fails, naming the difference', async () => {
    await job('tampered', '');
    await csv('tampered', ['T-1,1', 'T-2,2']);
    const update = h.rt.runs.update.bind(h.rt.runs);
    h.rt.runs.update = async (runId, patch) => {
      // The reader is done: one "created" more than any row had.
      if (patch.batches !== undefined)
        await h.rt.redis.hincrby(`${h.rt.statePrefix}:run:${runId}:counts`, 'created', 1);
      return update(runId, patch);
    };
    try {
      const { record } = await h.runJob('tampered');
      expect(record.status).toBe('failed');
      expect(record.message).toContain("the run's counts do not add up: read 2");
      expect(record.message).toContain('1 row more than read');
    } finally {
      h.rt.runs.update = update;
    }
    await waitFor('tampered', 1);
    expect(events('tampered')[0]!.event).toBe('failed');
  });

  it('each expectation fails a run as "expectation not met" and notifies', async () => {
    await job('few', 'expect: { minRows: 5 }');
    await csv('few', ['F-1,1']);
    await job('empty', 'expect: { minRows: 1 }');
    await csv('empty', []);
    await job('bad', 'expect: { maxDeadLetterRatio: 0.1 }');
    await csv('bad', ['B-1,1', 'B-2,x']);
    const cases: Array<[string, string]> = [
      ['few', 'minRows 5: the run read 1 row'],
      ['empty', 'minRows 1: the run read 0 rows'],
      ['bad', 'maxDeadLetterRatio 0.1: 1 of 2 rows dead-lettered'],
    ];
    for (const [name, why] of cases) {
      const { record } = await h.runJob(name);
      expect(record.status, `${name}: ${record.message}`).toBe('unmet');
      expect(record.message, name).toContain(`expectation not met: ${why}`);
      await until(
        () => events(name).some((p) => p.event === 'expectation'),
        20_000,
        `the expectation notification of ${name}`,
      );
      expect(events(name).find((p) => p.event === 'expectation')!.error!.message).toContain(why);
    }
  });

  it('a job without a successful run within expect.freshness is notified stale, once per cooldown', async () => {
    await job('quiet', 'expect: { freshness: 2s }');
    expect(await checkStaleJobs(h.rt)).not.toContain('quiet');
    expect(await checkStaleJobs(h.rt, Date.now() + 5_000)).toContain('quiet');
    expect(await checkStaleJobs(h.rt, Date.now() + 6_000)).toContain('quiet');
    await waitFor('quiet', 1);
    await new Promise((r) => setTimeout(r, 500));
    expect(events('quiet').map((p) => p.event)).toEqual(['stale']);
  });

  it('`run` exits 3 on an unmet expectation, having delivered its own notification', async () => {
    await job('cli-few', 'expect: { minRows: 10 }');
    await csv('cli-few', ['C-1,1']);
    // No notify worker listens while `run` works: what arrives, it sent itself.
    await notifier.pause();
    try {
      const done = await spawnCli(h, children, ['run', 'cli-few']).exited;
      expect(done.code).toBe(3);
      expect(done.stderr).toContain('notification expectation to job:0: delivered');
      expect(events('cli-few').map((p) => p.event)).toEqual(['expectation']);
    } finally {
      await notifier.resume();
    }
  }, 90_000);
});
