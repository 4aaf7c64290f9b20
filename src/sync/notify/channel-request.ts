/**
 * The HTTP request of one notification to one channel, in the channel's own format:
 * a generic webhook gets the payload as JSON, signed by the Standard Webhooks scheme
 * (webhook-id, webhook-timestamp, webhook-signature) when ROWBRIDGE_NOTIFY_SECRET is
 * set; Slack, Feishu, DingTalk and WeCom get their incoming-webhook text message, and a
 * DingTalk robot with a signing secret its timestamp and HMAC-SHA256 sign.
 */
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { NotifyChannel } from '../job-spec/notify-schemas.ts';
import { describePayload } from './notification-payload.ts';
import type { NotificationPayload } from './notification-payload.ts';

/** What is sent: method POST, always JSON. */
export interface ChannelRequest {
  url: URL;
  headers: Record<string, string>;
  body: string;
}

/** What the request needs besides the channel: its resolved URL and secrets, the message id. */
export interface ChannelRequestInput {
  channel: NotifyChannel;
  url: URL;
  /** DingTalk: the resolved signing secret. */
  signingSecret?: string;
  /** Generic webhooks: ROWBRIDGE_NOTIFY_SECRET. */
  webhookSecret?: string;
  /** The same on every retry of one notification, so a receiver can drop repeats. */
  messageId: string;
  payload: NotificationPayload;
  now?: Date;
}

function chatBody(channel: NotifyChannel, text: string): unknown {
  switch (channel.type) {
    case 'slack':
      return { text };
    case 'feishu':
      return { msg_type: 'text', content: { text } };
    case 'dingtalk':
    case 'wecom':
      return { msgtype: 'text', text: { content: text } };
    case 'webhook':
      throw new Error('a generic webhook has no chat body');
  }
}

/** Builds the request; no I/O. */
export function channelRequest(input: ChannelRequestInput): ChannelRequest {
  const now = input.now ?? new Date();
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const url = new URL(input.url);
  if (input.channel.type === 'webhook') {
    const body = JSON.stringify(input.payload);
    if (input.webhookSecret !== undefined) {
      const signature = new Webhook(input.webhookSecret).sign(input.messageId, now, body);
      headers['webhook-id'] = input.messageId;
      headers['webhook-timestamp'] = String(Math.floor(now.getTime() / 1000));
      headers['webhook-signature'] = signature;
    }
    return { url, headers, body };
  }
  if (input.channel.type === 'dingtalk' && input.signingSecret !== undefined) {
    const timestamp = String(now.getTime());
    const sign = createHmac('sha256', input.signingSecret)
      .update(`${timestamp}\n${input.signingSecret}`)
      .digest('base64');
    url.searchParams.set('timestamp', timestamp);
    url.searchParams.set('sign', sign);
  }
  return { url, headers, body: JSON.stringify(chatBody(input.channel, describePayload(input.payload))) };
}

/**
 * Whether a 2xx answer is a success: the chat platforms answer 200 with an error code in
 * the body (a wrong keyword, a bad sign, a disabled robot).
 */
export function answerError(channel: NotifyChannel, body: string): string | undefined {
  if (channel.type === 'webhook' || channel.type === 'slack') return undefined;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(body) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const code = parsed.errcode ?? parsed.code ?? parsed.StatusCode;
  if (code === undefined || code === 0) return undefined;
  const msg = parsed.errmsg ?? parsed.msg ?? parsed.StatusMessage;
  return `${channel.type} answered code ${typeof code === 'string' || typeof code === 'number' ? code : JSON.stringify(code)}${typeof msg === 'string' ? `: ${msg.slice(0, 200)}` : ''}`;
}
