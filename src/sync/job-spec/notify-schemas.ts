/**
 * `notify:` and `expect:` of a job spec (issue 27 §1, §2). A channel's `url` is a
 * literal http(s) URL or exactly one whole-value reference (`${NAME}`, `${file:PATH}`):
 * text around a reference would let a spec carry one secret to another host inside a
 * notification URL. The same channel schema reads ROWBRIDGE_NOTIFY.
 */
import { z } from 'zod';
import { intRange } from './schema-checks.ts';

/** What a channel can be told about. */
export const NOTIFY_EVENTS = [
  'failed',
  'dead-letters',
  'recovered',
  'schema-drift',
  'expectation',
  'stale',
  'throttled',
] as const;

/** One event of {@link NOTIFY_EVENTS}. */
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

/** The incoming-webhook formats rowbridge speaks. */
export const CHANNEL_TYPES = ['webhook', 'slack', 'feishu', 'dingtalk', 'wecom'] as const;

/** A whole-value reference: `${NAME}` or `${file:/path}`, nothing around it. */
export const WHOLE_REF = /^\$\{(?:([A-Za-z_][A-Za-z0-9_]*)|file:([^}]+))\}$/;

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

// The value is never repeated in a message: a literal URL of a chat webhook is its secret.
const channelUrl = z.string().superRefine((value, ctx) => {
  if (WHOLE_REF.test(value) || (!value.includes('${') && isHttpUrl(value))) return;
  ctx.addIssue({
    code: 'custom',
    message: value.includes('${')
      ? 'must be exactly one ${NAME} or ${file:/path} with nothing around it (e.g. url: "${ALERTS_WEBHOOK_URL}"), or a literal URL'
      : 'must be an http(s) URL, or exactly one ${NAME} or ${file:/path} holding one',
  });
});

const signingSecret = z.string().regex(WHOLE_REF, {
  error: 'must be exactly one ${NAME} or ${file:/path} holding the signing secret, never the secret itself',
});

/** One notification channel of `notify:` or ROWBRIDGE_NOTIFY. */
export const notifyChannelSchema = z
  .strictObject({
    type: z
      .enum(CHANNEL_TYPES)
      .describe('webhook: generic JSON signed by Standard Webhooks; or a chat format.'),
    url: channelUrl.describe('An http(s) URL or exactly one ${NAME} / ${file:/path} that holds it.'),
    on: z
      .array(z.enum(NOTIFY_EVENTS))
      .min(1, { error: 'must name at least one event' })
      .describe('Events sent to this channel.'),
    secret: signingSecret
      .optional()
      .describe("dingtalk: the robot's signing secret, as ${NAME} or ${file:/path}."),
  })
  .superRefine((channel, ctx) => {
    if (channel.secret !== undefined && channel.type !== 'dingtalk')
      ctx.addIssue({
        code: 'custom',
        path: ['secret'],
        message: 'is only for type dingtalk (its signed robots)',
      });
  });

/** A channel as written. */
export type NotifyChannel = z.output<typeof notifyChannelSchema>;

const DURATION = /^(\d+)\s*(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `90s`, `30m`, `2h`, `1d` in milliseconds; undefined when not such a duration. */
export function durationMs(text: string): number | undefined {
  const m = DURATION.exec(text.trim());
  if (m === null) return undefined;
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

const ratio = (what: string) =>
  z
    .number({ error: `must be a share from 0 to 1 (0.01 = 1% of ${what})` })
    .min(0, { error: `must be a share from 0 to 1 (0.01 = 1% of ${what})` })
    .max(1, { error: `must be a share from 0 to 1 (0.01 = 1% of ${what})` });

/** `expect:` of a job (docs/expectations.md). */
export const expectSchema = z
  .strictObject({
    minRows: intRange(0, 1_000_000_000).optional().describe('A run that reads fewer rows is not a success.'),
    maxDeadLetterRatio: ratio('the rows read')
      .optional()
      .describe('Dead-lettered rows at most this share of the rows read.'),
    maxDeleteRatio: ratio("the worksheet's rows")
      .optional()
      .describe('Mirror: deleted rows at most this share of (rows read + rows deleted).'),
    freshness: z
      .string()
      .refine((text) => (durationMs(text) ?? 0) > 0, {
        error: 'must be a duration such as 90s, 30m, 2h or 1d',
      })
      .optional()
      .describe('The workers notify `stale` when no run succeeded within this long.'),
  })
  .describe('What every run must meet; a run that does not finishes as "expectation not met".');

/** `expect:` as written. */
export type JobExpectations = z.output<typeof expectSchema>;
