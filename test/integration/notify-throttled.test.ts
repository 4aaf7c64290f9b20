/**
 * Issue 27 §1, the `throttled` event: a run the platform answers only "throttled" (error
 * 51 from the emulator's rate limit) for longer than ROWBRIDGE_NOTIFY_THROTTLED_MS queues
 * the event once, while it is still running; a run throttled for less raises none. A local
 * server receives and verifies (Standard Webhooks) what is sent.
 */
import type { Worker } from 'bullmq';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNotifyWorker } from '../../src/queue/notify-worker.ts';
import type { NotifyJobData } from '../../src/queue/notify-queue.ts';
import type { NotificationPayload } from '../../src/sync/notify/notification-payload.ts';
import { until } from '../helpers/cli-process.ts';
import { startRecordingServer } from '../helpers/recording-server.ts';
import type { RecordingServer } from '../helpers/recording-server.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

const SECRET = `whsec_${Buffer.from('rowbridge-throttled-test-secret!').toString('base64')}`;
const THROTTLED_MS = 2_000;

describe('the throttled event', () => {
  let h: Harness;
  let server: RecordingServer;
  let notifier: Worker<NotifyJobData>;

  const received = (): NotificationPayload[] =>
    server.requests.map(
      (r) =>
        new Webhook(SECRET).verify(r.rawBody, r.headers as Record<string, string>) as NotificationPayload,
    );
  const throttledEvents = () => received().filter((p) => p.event === 'throttled');
  /** Every request from now on is answered 51, until `lift`. */
  const throttleAll = () => h.emulator.setOptions({ rateLimit: { requestsPerSecond: 0.001, burst: 1 } });
  const lift = () => h.emulator.setOptions({ rateLimit: undefined });

  beforeAll(async () => {
    server = await startRecordingServer();
    server.respond(() => ({ body: 'ok' }));
    h = await createHarness(
      'notify-throttled',
      {},
      {
        ALERTS_URL: `${server.url}/alerts`,
        ROWBRIDGE_NOTIFY_SECRET: SECRET,
        ROWBRIDGE_NOTIFY_THROTTLED_MS: String(THROTTLED_MS),
        // A short cooldown: "once per run" must be the event's own doing.
        ROWBRIDGE_NOTIFY_COOLDOWN_MS: '200',
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
    await h.writeFile('ledger.csv', 'entry,amount\nL-1,1\nL-2,2\nL-3,3\n');
    await h.writeJob(
      'ledger',
      `name: ledger
source: { type: csv, path: ./ledger.csv }
target: { worksheet: ledger, mode: upsert, key: entry }
fields: { entry: entry, amount: amount }
notify:
  - { type: webhook, url: "\${ALERTS_URL}", on: [throttled] }
`,
    );
    h.startWorkers();
    notifier = createNotifyWorker(h.rt);
  }, 60_000);
  afterAll(async () => {
    lift();
    await notifier?.close();
    await h?.close();
    await server?.close();
  });

  it('a run throttled without a break for longer queues the event once, while it runs', async () => {
    throttleAll();
    const run = h.runJob('ledger');
    await until(() => throttledEvents().length > 0, 20_000, 'the throttled notification');
    // Still throttled for a while after the event: no second one for the same run.
    await new Promise((r) => setTimeout(r, THROTTLED_MS));
    lift();
    const { record, report } = await run;
    expect(record.status).toBe('completed');
    expect(report.created + report.updated).toBe(3);
    expect(report.throttled).toBeGreaterThan(1);
    await new Promise((r) => setTimeout(r, 1_000));
    const events = throttledEvents();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      event: 'throttled',
      job: 'ledger',
      runId: record.runId,
      error: { category: 'throttled' },
    });
    expect(events[0]!.error!.message).toMatch(/answered only "throttled" \(51\/90000\) since /);
  }, 60_000);
  it('a run throttled for less than the limit raises nothing', async () => {
    await h.writeFile('ledger.csv', 'entry,amount\nL-1,10\nL-2,20\nL-3,30\n');
    throttleAll();
    const run = h.runJob('ledger');
    await new Promise((r) => setTimeout(r, THROTTLED_MS / 3));
    lift();
    const { record, report } = await run;
    expect(record.status).toBe('completed');
    expect(report.throttled).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(throttledEvents().filter((p) => p.runId === record.runId)).toEqual([]);
  }, 60_000);
});
