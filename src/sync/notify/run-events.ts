/**
 * Which events a finished run raises (issue 27 §1), a pure function of its record, its
 * report and the job's previous outcome. Events come in groups of alternatives: a run
 * stopped by schema drift is `schema-drift` to a channel that listens for it and
 * `failed` to one that listens only for failures, never both to one channel.
 */
import type { NotifyChannel, NotifyEvent } from '../job-spec/notify-schemas.ts';
import { SCHEMA_DRIFT_CODE } from '../prepare/schema-drift.ts';

/** What the decision reads of a finished run. */
export interface FinishedRun {
  status: string;
  errorCode?: string;
  deadLettered: number;
}

/** Outcomes that count for `recovered`: a run that failed, or did not meet its expectations. */
const BAD = new Set(['failed', 'unmet']);

/** The run's events, each group a list of alternatives, most specific first. */
export function runEvents(run: FinishedRun, previousStatus: string | undefined): NotifyEvent[][] {
  const groups: NotifyEvent[][] = [];
  if (run.status === 'failed')
    groups.push(run.errorCode === SCHEMA_DRIFT_CODE ? ['schema-drift', 'failed'] : ['failed']);
  if (run.status === 'unmet') groups.push(['expectation']);
  if ((run.status === 'completed' || run.status === 'unmet') && run.deadLettered > 0)
    groups.push(['dead-letters']);
  if (run.status === 'completed' && previousStatus !== undefined && BAD.has(previousStatus))
    groups.push(['recovered']);
  return groups;
}

/** The event of a group a channel gets: the first alternative it listens for. */
export function eventFor(
  channel: Pick<NotifyChannel, 'on'>,
  group: readonly NotifyEvent[],
): NotifyEvent | undefined {
  return group.find((event) => channel.on.includes(event));
}
