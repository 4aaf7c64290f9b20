/**
 * Delivering one queued notification: the channel's URL and secrets are resolved from the
 * job spec and the environment here, at delivery. A notifier that fails never fails a
 * run: it is counted (`onResult`, /metrics) and its last failures are kept for the job's
 * page (`<state>:notify:failures:<job>`, a list of the newest 20). Loaded by the notify
 * worker at its first job (notify-worker.ts), and by `run` for its own run's notifications.
 */
import type { Job } from 'bullmq';
import { withoutUrls } from '../ground/mask-secrets.ts';
import { sendNotification } from '../sync/notify/send-notification.ts';
import type { ChannelAnswer } from '../sync/notify/send-notification.ts';
import { channelsOf, notifyKey, openNotifyQueue } from './notify-queue.ts';
import type { NotifyJobData } from './notify-queue.ts';
import type { Runtime } from './runtime-types.ts';

/** Failed deliveries kept per job for its dashboard page, newest first. */
export const NOTIFY_FAILURES_KEPT = 20;

/** One failed delivery as the job page shows it: the channel by name, never its URL. */
export interface NotifyFailure {
  at: string;
  /** `env:N` or `job:N`. */
  channel: string;
  channelType: string;
  event: string;
  /** The error, naming the channel by where it was written; any URL masked. */
  message: string;
}

/** One delivery attempt's outcome, for metrics. */
export interface NotifyResult {
  job: string;
  channelType: string;
  ok: boolean;
}

/** Sends one queued notification; records a failure on the job; rethrows it for BullMQ's retry. */
export async function deliver(
  rt: Runtime,
  job: Job<NotifyJobData>,
  onResult?: (r: NotifyResult) => void,
  signal?: AbortSignal,
): Promise<ChannelAnswer> {
  const { data } = job;
  const named = (await channelsOf(rt, data.job)).find((c) => c.id === data.channel);
  const channelType = named?.channel.type ?? 'unknown';
  try {
    if (named === undefined)
      throw new Error(`channel ${data.channel} is no longer configured for job ${data.job}`);
    const answer = await sendNotification(named, data.payload, job.id ?? job.name, rt.env, signal);
    onResult?.({ job: data.job, channelType, ok: true });
    return answer;
  } catch (err) {
    const message = (err as Error).message;
    onResult?.({ job: data.job, channelType, ok: false });
    const failure: NotifyFailure = {
      at: new Date().toISOString(),
      channel: data.channel,
      channelType,
      event: data.payload.event,
      message: withoutUrls(message),
    };
    const key = notifyKey(rt, 'failures', data.job);
    await rt.redis
      .multi()
      .lpush(key, JSON.stringify(failure))
      .ltrim(key, 0, NOTIFY_FAILURES_KEPT - 1)
      .expire(key, 30 * 86_400)
      .exec();
    throw err;
  }
}

/**
 * `run`'s own notifications (held back from the workers, notify-queue.ts): delivered now,
 * within `timeoutMs` in all. What is delivered is removed; what fails is left to the
 * workers' retries. Resolves to one line per notification, for the command to print.
 */
export async function deliverOwnNotifications(
  rt: Runtime,
  runId: string,
  timeoutMs = 10_000,
): Promise<string[]> {
  const queue = openNotifyQueue(rt);
  const signal = AbortSignal.timeout(timeoutMs);
  const lines: string[] = [];
  try {
    const held = (await queue.getDelayed(0, 999)).filter((j) => j.data.payload.runId === runId);
    for (const job of held) {
      if (signal.aborted) break;
      const what = `notification ${job.data.payload.event} to ${job.data.channel}`;
      try {
        await deliver(rt, job, undefined, signal);
        await job.remove().catch(() => undefined);
        lines.push(`${what}: delivered`);
      } catch (err) {
        lines.push(`${what}: ${(err as Error).message}; the workers retry it`);
      }
    }
  } finally {
    await queue.close();
  }
  return lines;
}
