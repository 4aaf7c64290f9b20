/**
 * A finished run's notifications: the events it raises (sync/notify/run-events.ts) for
 * each channel listening, queued with its counts, its top three dead-letter reasons and
 * its error. Called as the run is released; it never fails the run: what goes wrong here
 * is logged and shows in the notify queue.
 */
import type { NotifyEvent } from '../sync/job-spec/notify-schemas.ts';
import type { NotificationPayload } from '../sync/notify/notification-payload.ts';
import { topReasons } from '../sync/notify/notification-payload.ts';
import { eventFor, runEvents } from '../sync/notify/run-events.ts';
import type { NamedChannel } from '../sync/notify/notify-channels.ts';
import { channelsOf, notifyKey, OWN_DELIVERY_HOLD_MS, queueEvent } from './notify-queue.ts';
import type { Runtime } from './runtime-types.ts';

/** Outcomes that say something about the job's health (a skip says nothing). */
const OUTCOMES = new Set(['completed', 'unmet', 'failed']);

/** Records the run's outcome for the job and queues what it raises. Resolves to the jobs queued. */
export async function notifyRunFinished(rt: Runtime, job: string, runId: string): Promise<string[]> {
  const record = await rt.runs.get(runId);
  if (record === undefined || !OUTCOMES.has(record.status)) return [];
  const previous = await rt.redis.getset(notifyKey(rt, 'last', job), record.status);
  if (record.status === 'completed') await rt.redis.set(notifyKey(rt, 'ok', job), String(Date.now()));
  const report = await rt.runs.report(runId);
  const groups = runEvents(
    {
      status: record.status,
      deadLettered: report.deadLetteredTotal,
      ...(record.errorCode === undefined ? {} : { errorCode: record.errorCode }),
    },
    previous ?? undefined,
  );
  if (groups.length === 0) return [];
  const channels = await channelsOf(rt, job);
  const byEvent = new Map<NotifyEvent, NamedChannel[]>();
  for (const group of groups) {
    for (const named of channels) {
      const event = eventFor(named.channel, group);
      if (event !== undefined) byEvent.set(event, [...(byEvent.get(event) ?? []), named]);
    }
  }
  let reasons: NotificationPayload['deadLetterReasons'];
  const payloadOf = async (event: NotifyEvent): Promise<NotificationPayload> => {
    if (report.deadLetteredTotal > 0 && reasons === undefined) {
      const { entries } = await rt.deadLetters.list({ job, runId, limit: 1000 });
      reasons = topReasons(entries.map((e) => `${e.category}: ${e.message}`));
    }
    return {
      event,
      job,
      runId,
      at: record.finishedAt ?? new Date().toISOString(),
      status: record.status,
      counts: {
        read: report.read,
        created: report.created,
        updated: report.updated,
        unchanged: report.unchanged,
        skipped: report.skipped,
        deleted: report.deleted,
        deadLettered: report.deadLetteredTotal,
      },
      ...(reasons === undefined || reasons.length === 0 ? {} : { deadLetterReasons: reasons }),
      ...(record.message === undefined
        ? {}
        : {
            error: {
              category: record.category ?? (record.status === 'unmet' ? 'expectation' : 'unknown'),
              message: record.message,
            },
          }),
    };
  };
  // A `run JOB` works in queues of its own and delivers its run's notifications itself
  // before it exits; the workers take over only what it could not deliver.
  const own = rt.queuePrefix !== rt.settings.queuePrefix;
  return queueEvent(
    rt,
    job,
    [...byEvent].map(([event, list]) => ({ event, channels: list })),
    payloadOf,
    own ? OWN_DELIVERY_HOLD_MS : 0,
  );
}
