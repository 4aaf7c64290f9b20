/**
 * A job's `schedule`: a 5-field cron ("minute hour day-of-month month day-of-week"), or
 * `{ cron, seconds, timezone }` for a 6-field cron whose first field is seconds (refused
 * without `seconds: true`: one field too many would otherwise fire every few seconds)
 * and for hours read in a zone of the job's own rather than the worker's.
 */
import { CronExpressionParser } from 'cron-parser';
import { z } from 'zod';
import { timeZone } from './schema-checks.ts';

/** The `schedule` of a job spec as written. */
export type ScheduleSpec =
  string | { cron: string; seconds?: boolean | undefined; timezone?: string | undefined };

/** What the scheduler registers: the cron and the zone it fires in (undefined: the process's). */
export interface Schedule {
  pattern: string;
  tz?: string;
}

function check(cron: string, seconds: boolean, ctx: z.RefinementCtx, path: PropertyKey[]): void {
  const fields = cron.trim().split(/\s+/).length;
  if (fields === 6 && !seconds) {
    ctx.addIssue({
      code: 'custom',
      path,
      message:
        `has 6 fields, so its first would be seconds ("${cron}" would fire every few seconds): ` +
        `write { cron: "${cron}", seconds: true } if seconds are meant, else the 5 fields "minute hour day-of-month month day-of-week"`,
    });
    return;
  }
  if (seconds && fields !== 6) {
    ctx.addIssue({
      code: 'custom',
      path,
      message: `has ${fields} fields, but seconds: true wants 6 ("second minute hour day-of-month month day-of-week")`,
    });
    return;
  }
  if (fields !== 5 && fields !== 6) {
    ctx.addIssue({
      code: 'custom',
      path,
      message: `must be a cron expression of 5 fields ("minute hour day-of-month month day-of-week", e.g. "*/15 * * * *"); got ${fields}`,
    });
    return;
  }
  try {
    CronExpressionParser.parse(cron);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    ctx.addIssue({
      code: 'custom',
      path,
      message: `must be a cron expression ("minute hour day-of-month month day-of-week", e.g. "*/15 * * * *"); ${reason}`,
    });
  }
}

/** The schema of `schedule`. */
export const scheduleSchema = z
  .union([
    z.string(),
    z.strictObject({
      cron: z.string().describe('The cron pattern.'),
      seconds: z.boolean().optional().describe('The cron has 6 fields, the first being seconds.'),
      timezone: timeZone.optional().describe("The zone its hours are read in (default: the worker's)."),
    }),
  ])
  .superRefine((value, ctx) => {
    if (typeof value === 'string') check(value, false, ctx, []);
    else check(value.cron, value.seconds === true, ctx, ['cron']);
  })
  .describe('Cron pattern (or { cron, seconds, timezone }); registered as a BullMQ job scheduler.');

/** The schedule to register, from the spec's `schedule`. */
export function scheduleOf(spec: ScheduleSpec): Schedule {
  if (typeof spec === 'string') return { pattern: spec };
  return { pattern: spec.cron, ...(spec.timezone === undefined ? {} : { tz: spec.timezone }) };
}

/** The next `count` times the schedule fires after `from`, and the zone they are in. */
export function nextFireTimes(
  spec: ScheduleSpec,
  count = 3,
  from = new Date(),
): { zone: string; times: Date[] } {
  const { pattern, tz } = scheduleOf(spec);
  const zone = tz ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  const expression = CronExpressionParser.parse(pattern, { currentDate: from, tz: zone });
  return { zone, times: Array.from({ length: count }, () => expression.next().toDate()) };
}
