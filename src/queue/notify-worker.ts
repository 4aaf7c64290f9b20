/**
 * The workers' notify worker: takes queued notifications (retried with backoff, see
 * notify-queue.ts) and delivers them through notify-delivery.ts, which it loads at its
 * first job: the channel formats and the job-spec schemas stay out of an idle worker.
 */
import { Worker } from 'bullmq';
import { createRepeatGate } from '../ground/repeat-gate.ts';
import type { NotifyResult } from './notify-delivery.ts';
import type { NotifyJobData } from './notify-queue.ts';
import { NOTIFY_QUEUE } from './queues.ts';
import type { Runtime } from './runtime-types.ts';

/** The workers' notify worker, on the shared queue prefix. */
export function createNotifyWorker(
  rt: Runtime,
  options: { onResult?: (r: NotifyResult) => void } = {},
): Worker<NotifyJobData> {
  const worker = new Worker<NotifyJobData>(
    NOTIFY_QUEUE,
    async (job, _token, signal) => {
      const { deliver } = await import('./notify-delivery.ts');
      await deliver(rt, job, options.onResult, signal);
    },
    { connection: rt.connection, prefix: rt.settings.queuePrefix, concurrency: 4 },
  );
  const errors = createRepeatGate(10_000);
  worker.on('error', (err) => {
    if (errors(err.message)) rt.logger.error({ err: { message: err.message } }, 'worker notify');
  });
  worker.on('failed', (job, err) => {
    rt.logger.warn(
      {
        job: job?.data.job,
        channel: job?.data.channel,
        attempt: job?.attemptsMade,
        err: { message: err.message },
      },
      'notification not delivered',
    );
  });
  return worker;
}
