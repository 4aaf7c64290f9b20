/**
 * A channel's URL (and DingTalk's signing secret) as delivery needs it: a literal, or the
 * one whole-value `${NAME}` / `${file:PATH}` it names, resolved at delivery and never
 * kept. Such a reference resolves whatever ROWBRIDGE_SOURCE_ENV_ALLOW says: that setting
 * guards what sources send, and the value can only be used whole, as this URL.
 */
import { ConfigError } from '../../ground/errors.ts';
import { WHOLE_REF } from '../job-spec/notify-schemas.ts';
import { readSecretFile } from '../sources/secret-file.ts';

/** The value `text` stands for; `where` names the setting in errors (`notify[0].url`). */
export function resolveWholeRef(text: string, env: NodeJS.ProcessEnv, where: string): string {
  const m = WHOLE_REF.exec(text);
  if (m === null) return text;
  if (m[1] === undefined) {
    try {
      return readSecretFile(m[2]!, env, where);
    } catch (err) {
      throw new ConfigError((err as Error).message);
    }
  }
  const value = env[m[1]]?.trim();
  if (value === undefined || value === '')
    throw new ConfigError(`${where} refers to \${${m[1]}}, but the environment variable ${m[1]} is not set`);
  return value;
}

/**
 * The channel's URL, checked to be http(s). A value that is not is refused without
 * being shown: whatever the variable holds, it is no place to send a notification to.
 */
export function resolveChannelUrl(text: string, env: NodeJS.ProcessEnv, where: string): URL {
  const value = resolveWholeRef(text, env, where);
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    const from = text === value ? '' : ` (what ${text} holds)`;
    throw new ConfigError(`${where}${from} is not an http(s) URL; it is not shown`);
  }
  return url;
}
