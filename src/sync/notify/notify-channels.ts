/**
 * The channels a job notifies: those of ROWBRIDGE_NOTIFY (every job) and then the job's
 * own `notify:`. A channel is named by where it was written (`env:0`, `job:1`): that
 * name, never the URL, is what a queued notification carries.
 */
import { parse } from 'yaml';
import { z } from 'zod';
import { readSetting } from '../../../config/settings.ts';
import { ConfigError } from '../../ground/errors.ts';
import { notifyChannelSchema } from '../job-spec/notify-schemas.ts';
import type { NotifyChannel } from '../job-spec/notify-schemas.ts';

/** A channel with its name and the setting it came from, for messages. */
export interface NamedChannel {
  /** `env:N` (ROWBRIDGE_NOTIFY) or `job:N` (the job's `notify:`). */
  id: string;
  /** `ROWBRIDGE_NOTIFY[0]`, `notify[1]`: where to look when it fails. */
  where: string;
  channel: NotifyChannel;
}

/** ROWBRIDGE_NOTIFY as channels: a YAML or JSON list; an error names the entry and the field. */
export function envChannels(env: NodeJS.ProcessEnv): NotifyChannel[] {
  const raw = readSetting('notify', env);
  if (raw === undefined) return [];
  let value: unknown;
  try {
    value = parse(raw);
  } catch {
    throw new ConfigError('ROWBRIDGE_NOTIFY must be a YAML or JSON list of channels; it does not parse');
  }
  const result = z.array(notifyChannelSchema).safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const at = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
    throw new ConfigError(`ROWBRIDGE_NOTIFY${at} ${issue.message}`);
  }
  return result.data;
}

/** Every channel of a job, ROWBRIDGE_NOTIFY's first. */
export function notifyChannels(
  notify: readonly NotifyChannel[] | undefined,
  env: NodeJS.ProcessEnv,
): NamedChannel[] {
  return [
    ...envChannels(env).map((channel, i) => ({ id: `env:${i}`, where: `ROWBRIDGE_NOTIFY[${i}]`, channel })),
    ...(notify ?? []).map((channel, i) => ({ id: `job:${i}`, where: `notify[${i}]`, channel })),
  ];
}
