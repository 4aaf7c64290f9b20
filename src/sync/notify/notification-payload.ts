/**
 * What a notification says, the same for every channel: the event, the job, the run
 * and its counts, the top dead-letter reasons, the error (its category and message, as
 * masked as the run record holds it) and a link to the job page. Built when the event
 * happens and queued as is: it holds no URL of a channel and no secret.
 */
import type { NotifyEvent } from '../job-spec/notify-schemas.ts';

/** Counts of a run, as its report has them. */
export interface NotificationCounts {
  read: number;
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
  deleted: number;
  deadLettered: number;
}

/** The body of a generic webhook; the chat formats render it as text. */
export interface NotificationPayload {
  event: NotifyEvent | 'test';
  job: string;
  runId?: string;
  /** ISO time the event happened. */
  at: string;
  /** The run's status (`failed`, `completed`, `unmet`), when the event is a run's. */
  status?: string;
  counts?: NotificationCounts;
  /** The three most frequent dead-letter reasons of the run, most frequent first. */
  deadLetterReasons?: Array<{ reason: string; count: number }>;
  error?: { category: string; message: string };
  /** Events of this kind held back by the cooldown since the last one sent. */
  repeats?: number;
  /** The job's dashboard page, when ROWBRIDGE_DASHBOARD_URL is set. */
  link?: string;
}

/** The job page under ROWBRIDGE_DASHBOARD_URL. */
export function jobLink(dashboardUrl: string | undefined, job: string): string | undefined {
  if (dashboardUrl === undefined) return undefined;
  return `${dashboardUrl.replace(/\/+$/, '')}/jobs/${encodeURIComponent(job)}`;
}

/** The most frequent reasons among `messages`, at most `top`. */
export function topReasons(messages: readonly string[], top = 3): Array<{ reason: string; count: number }> {
  const counts = new Map<string, number>();
  for (const m of messages) counts.set(m, (counts.get(m) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, top)
    .map(([reason, count]) => ({ reason, count }));
}

const HEADLINES: Record<NotificationPayload['event'], string> = {
  failed: 'run failed',
  'dead-letters': 'run finished with dead-lettered rows',
  recovered: 'run succeeded again after a failure',
  'schema-drift': 'the worksheet changed: the run was stopped',
  expectation: 'expectation not met',
  stale: 'no successful run within its freshness',
  throttled: 'the platform keeps throttling',
  test: 'test notification',
};

/** The payload as a few lines of text, for the chat formats. */
export function describePayload(p: NotificationPayload): string {
  const lines = [`[rowbridge] ${p.job}: ${HEADLINES[p.event]}`];
  if (p.runId !== undefined) lines.push(`run ${p.runId}${p.status === undefined ? '' : ` (${p.status})`}`);
  if (p.error !== undefined) lines.push(`${p.error.category}: ${p.error.message}`);
  if (p.counts !== undefined) {
    const c = p.counts;
    lines.push(
      `read ${c.read}, created ${c.created}, updated ${c.updated}, unchanged ${c.unchanged}, ` +
        `skipped ${c.skipped}, deleted ${c.deleted}, dead-lettered ${c.deadLettered}`,
    );
  }
  for (const r of p.deadLetterReasons ?? []) lines.push(`  ${r.count} × ${r.reason}`);
  if (p.repeats !== undefined && p.repeats > 0)
    lines.push(`(${p.repeats} more like this were held back by the cooldown)`);
  if (p.link !== undefined) lines.push(p.link);
  return lines.join('\n');
}
