/**
 * Notifications through a BullMQ queue (issue 27 §1), on the shared queue prefix, so a
 * worker's restart loses none and a failed delivery is retried with backoff for about an
 * hour. A queued notification carries the job, the event, the channel's name (`env:0`,
 * `job:1`) and the payload: never the channel's URL or a secret, which the deliverer
 * resolves from the environment and the job spec when it sends. One notification per
 * event per job per cooldown; the next one says how many were held back.
 */
import { Queue } from 'bullmq';
import type { JobsOptions } from 'bullmq';
import type { NotifyChannel, NotifyEvent } from '../sync/job-spec/notify-schemas.ts';
import { notifyChannels } from '../sync/notify/notify-channels.ts';
import type { NamedChannel } from '../sync/notify/notify-channels.ts';
import { jobLink } from '../sync/notify/notification-payload.ts';
import type { NotificationPayload } from '../sync/notify/notification-payload.ts';
import { NOTIFY_QUEUE } from './queues.ts';
import type { Redis } from 'ioredis';
import type { Settings } from '../../config/settings.ts';
import type { Logger } from '../ground/logger.ts';
import type { LoadJob } from './runtime-types.ts';

/** What queueing notifications uses: the notify queue, and the cooldowns kept in Redis. */
export interface NotifyQueueDeps {
  /** BullMQ connection. */
  connection: Redis;
  /** State connection: cooldowns and repeat counts. */
  redis: Redis;
  /** Prefix of rowbridge's own keys. */
  statePrefix: string;
  settings: Pick<Settings, 'queuePrefix' | 'notifyCooldownMs' | 'dashboardUrl'>;
  logger: Logger;
}

/** Where a job's channels come from: its spec, and ROWBRIDGE_NOTIFY in the environment. */
export interface ChannelSources {
  loadJob: LoadJob;
  env: NodeJS.ProcessEnv;
}

/** Data of a notification job: names only, never a URL or a secret. */
export interface NotifyJobData {
  job: string;
  /** The channel's name: `env:N` or `job:N` (sync/notify/notify-channels.ts). */
  channel: string;
  payload: NotificationPayload;
}

/** Retries with backoff: 7 s doubling, ten attempts, about an hour in all. */
export const NOTIFY_JOB_OPTIONS: JobsOptions = {
  attempts: 10,
  backoff: { type: 'exponential', delay: 7_000 },
  removeOnComplete: { age: 86_400, count: 1000 },
  removeOnFail: { age: 7 * 86_400, count: 1000 },
};

/** How long `run` has to deliver its own notifications before the workers may take them. */
export const OWN_DELIVERY_HOLD_MS = 15_000;

/** The notify queue, on the shared prefix (a `run JOB`'s own queues have no worker). */
export function openNotifyQueue(
  rt: Pick<NotifyQueueDeps, 'connection' | 'settings' | 'logger'>,
): Queue<NotifyJobData> {
  const queue = new Queue<NotifyJobData>(NOTIFY_QUEUE, {
    connection: rt.connection,
    prefix: rt.settings.queuePrefix,
  });
  queue.on('error', (err: Error) => rt.logger.warn({ err: { message: err.message } }, 'queue notify'));
  return queue;
}

/** Keys of the notification state, under the state prefix. */
export function notifyKey(
  rt: Pick<NotifyQueueDeps, 'statePrefix'>,
  kind: string,
  job: string,
  event = '',
): string {
  return `${rt.statePrefix}:notify:${kind}:${job}${event === '' ? '' : `:${event}`}`;
}

/** The channels of a job: its spec's and ROWBRIDGE_NOTIFY's; a spec that cannot load has only the latter. */
export async function channelsOf(rt: ChannelSources, job: string): Promise<NamedChannel[]> {
  let notify: NotifyChannel[] | undefined;
  try {
    notify = (await rt.loadJob(job)).spec.notify;
  } catch {
    notify = undefined;
  }
  return notifyChannels(notify, rt.env);
}

/**
 * Queues `event` of `job` to every channel listening for it, unless the cooldown holds
 * it back (then it is counted, and the next one sent says so). `delayMs` keeps the jobs
 * from the workers while `run` delivers them itself. Returns the jobs queued.
 */
export async function queueEvent(
  rt: NotifyQueueDeps,
  job: string,
  sends: ReadonlyArray<{ event: NotifyEvent; channels: readonly NamedChannel[] }>,
  payloadOf: (event: NotifyEvent) => Promise<NotificationPayload> | NotificationPayload,
  delayMs = 0,
): Promise<string[]> {
  const queued: string[] = [];
  const queue = openNotifyQueue(rt);
  try {
    for (const { event, channels } of sends) {
      if (channels.length === 0) continue;
      const cool = notifyKey(rt, 'cool', job, event);
      const repeatsKey = notifyKey(rt, 'repeats', job, event);
      const fresh = await rt.redis.set(cool, '1', 'PX', rt.settings.notifyCooldownMs, 'NX');
      if (fresh === null) {
        await rt.redis
          .multi()
          .incr(repeatsKey)
          .pexpire(repeatsKey, 7 * 86_400_000)
          .exec();
        continue;
      }
      const repeats = Number((await rt.redis.getdel(repeatsKey)) ?? 0);
      const link = jobLink(rt.settings.dashboardUrl, job);
      const payload: NotificationPayload = {
        ...(await payloadOf(event)),
        ...(repeats > 0 ? { repeats } : {}),
        ...(link === undefined ? {} : { link }),
      };
      const at = Date.now();
      for (const named of channels) {
        const id = `${job}-${event}-${named.id.replace(':', '')}-${payload.runId ?? at}`;
        await queue.add(
          event,
          { job, channel: named.id, payload },
          { ...NOTIFY_JOB_OPTIONS, jobId: id, ...(delayMs > 0 ? { delay: delayMs } : {}) },
        );
        queued.push(id);
      }
    }
  } finally {
    await queue.close();
  }
  return queued;
}
