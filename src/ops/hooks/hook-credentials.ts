/**
 * Who may call `POST /hooks/JOB`: a caller holding the job's token, or one signing with
 * its Standard Webhooks secret. Nothing is accepted while neither is configured.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Settings } from '../../../config/settings.ts';
import type { HookTrigger } from '../../sync/job-spec/hook-trigger.ts';

/** The credentials of one job's hooks, read from the environment. */
export interface HookCredentials {
  token?: string;
  secret?: string;
  /** The variables they come from, for messages (never the values). */
  tokenVar: string;
  secretVar: string;
}

/** Headers as node gives them: lower-case names. */
export type HookHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** The job's own variables when it names one (and then only those), else the ROWBRIDGE_HOOK_* settings. */
export function hookCredentialsOf(
  trigger: HookTrigger,
  settings: Pick<Settings, 'hookToken' | 'hookSecret'>,
  env: NodeJS.ProcessEnv,
): HookCredentials {
  const own = (name: string | undefined) => (name === undefined ? undefined : env[name]?.trim() || undefined);
  // A job that names a credential of its own takes only its own: the shared ones would
  // let any caller of another job's hooks in.
  const owns = trigger.tokenEnv !== undefined || trigger.secretEnv !== undefined;
  const token = owns ? own(trigger.tokenEnv) : settings.hookToken;
  const secret = owns ? own(trigger.secretEnv) : settings.hookSecret;
  return {
    ...(token === undefined ? {} : { token }),
    ...(secret === undefined ? {} : { secret }),
    tokenVar: trigger.tokenEnv ?? 'ROWBRIDGE_HOOK_TOKEN',
    secretVar: trigger.secretEnv ?? 'ROWBRIDGE_HOOK_SECRET',
  };
}

function header(headers: HookHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Equal in time independent of where they differ; hashing first hides the length too. */
function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** The token a call sends: `Authorization: Bearer <token>` or `X-Rowbridge-Token`. */
function givenToken(headers: HookHeaders): string | undefined {
  const auth = header(headers, 'authorization');
  const bearer = auth === undefined ? undefined : /^Bearer\s+(.+)$/i.exec(auth.trim())?.[1];
  return bearer ?? header(headers, 'x-rowbridge-token')?.trim();
}

/**
 * Checks a call. Returns undefined when it may pass, else why not (for the 401 answer:
 * names the variables and headers, never a value).
 */
export function checkHookCall(
  credentials: HookCredentials,
  headers: HookHeaders,
  body: Buffer,
): string | undefined {
  const { token, secret } = credentials;
  if (token === undefined && secret === undefined)
    return `no hook credential is configured: set ${credentials.tokenVar} or ${credentials.secretVar}`;
  const given = givenToken(headers);
  if (given !== undefined && token !== undefined && sameSecret(given, token)) return undefined;
  const signature = header(headers, 'webhook-signature');
  if (signature !== undefined && secret !== undefined) {
    try {
      // Checks the timestamp (5 minutes either way) and compares signatures in constant time.
      new Webhook(secret).verify(body, {
        'webhook-id': header(headers, 'webhook-id') ?? '',
        'webhook-timestamp': header(headers, 'webhook-timestamp') ?? '',
        'webhook-signature': signature,
      });
      return undefined;
    } catch (err) {
      return `signature refused: ${(err as Error).message}`;
    }
  }
  if (given !== undefined) return token === undefined ? 'this job takes signed calls only' : 'wrong token';
  if (signature !== undefined) return 'this job takes a token only (no signing secret is configured)';
  return secret === undefined
    ? 'send the token as Authorization: Bearer <token> or X-Rowbridge-Token'
    : token === undefined
      ? 'sign the call (webhook-id, webhook-timestamp, webhook-signature)'
      : 'send the token (Authorization: Bearer or X-Rowbridge-Token) or sign the call';
}
