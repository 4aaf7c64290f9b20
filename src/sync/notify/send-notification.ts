/**
 * Sends one notification to one channel: resolves the channel's URL and secrets from the
 * environment now (they are never queued), builds the request in the channel's format and
 * POSTs it. Errors name the channel by where it was written (`notify[1]`, feishu), never
 * by its URL, which is a credential for every chat platform.
 */
import { readSetting } from '../../../config/settings.ts';
import { RowbridgeError } from '../../ground/errors.ts';
import type { ErrorCategory } from '../../ground/errors.ts';
import { answerError, channelRequest } from './channel-request.ts';
import { resolveChannelUrl, resolveWholeRef } from './channel-url.ts';
import type { NamedChannel } from './notify-channels.ts';
import type { NotificationPayload } from './notification-payload.ts';

/** Longest wait for one channel's answer. */
const SEND_TIMEOUT_MS = 10_000;

/** A channel that did not take the notification. */
export class NotifyError extends RowbridgeError {
  override readonly name = 'NotifyError';
  override readonly code = 'ROWBRIDGE_NOTIFY_FAILED';
  override readonly category: ErrorCategory;
  constructor(message: string, category: ErrorCategory) {
    super(message);
    this.category = category;
  }
}

/** What a channel answered. */
export interface ChannelAnswer {
  status: number;
  /** The start of the body, for `notify test`. */
  body: string;
}

/** Sends `payload` to `named`; resolves with the answer, rejects with a {@link NotifyError}. */
export async function sendNotification(
  named: NamedChannel,
  payload: NotificationPayload,
  messageId: string,
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
): Promise<ChannelAnswer> {
  const { channel, where } = named;
  const label = `${where} (${channel.type})`;
  let request;
  try {
    const url = resolveChannelUrl(channel.url, env, `${where}.url`);
    const signingSecret =
      channel.secret === undefined ? undefined : resolveWholeRef(channel.secret, env, `${where}.secret`);
    const webhookSecret = readSetting('notifySecret', env);
    request = channelRequest({
      channel,
      url,
      messageId,
      payload,
      ...(signingSecret === undefined ? {} : { signingSecret }),
      ...(webhookSecret === undefined ? {} : { webhookSecret }),
    });
  } catch (err) {
    throw new NotifyError(`${label}: ${(err as Error).message}`, 'config');
  }
  const timeout = AbortSignal.timeout(SEND_TIMEOUT_MS);
  let res: Response;
  try {
    res = await fetch(request.url, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      redirect: 'manual',
      signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    throw new NotifyError(`${label}: no answer (${cause})`, 'transient');
  }
  const body = (await res.text().catch(() => '')).slice(0, 500);
  if (res.status < 200 || res.status >= 300)
    throw new NotifyError(
      `${label} answered HTTP ${res.status}`,
      res.status >= 500 || res.status === 429 ? 'transient' : 'config',
    );
  const refused = answerError(channel, body);
  if (refused !== undefined) throw new NotifyError(`${label}: ${refused}`, 'config');
  return { status: res.status, body };
}
