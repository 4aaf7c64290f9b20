/**
 * The one masking of credentials for everything rowbridge shows: the dashboard's job page
 * (a job spec as loaded, before any `${ENV}` is resolved, so an environment variable's
 * value never reaches the page; a reference such as `Bearer ${HELPDESK_TOKEN}` is shown
 * as written, since its name is what an operator needs to check) and the URLs in source
 * error messages, run records and logs (`maskUrl`: host, path and the query parameters
 * that are not credentials stay readable). The job-spec schema already refuses literal
 * credentials in credential-named headers and query parameters and user:password in
 * URLs; this is the second line, for anything it lets through.
 */
import { stringify } from 'yaml';

/** What a masked value shows. */
export const MASK = '••••••';

const ENV_REFERENCE = /\$\{[A-Za-z_][A-Za-z0-9_]*\}/g;
const HAS_REFERENCE = /\$\{[A-Za-z_][A-Za-z0-9_]*\}/;
/**
 * Words of names (headers, query parameters, spec keys) whose values are credentials. A
 * camel case name is split into words first, so the separator inside `api key` may be a
 * space. `pass` is a word of its own (`smtp_pass`), never the start of `passenger`.
 */
const SECRET_WORD =
  /(?:^|[^a-z])(?:authorization|auth|token|secret|password|passwd|passphrase|passcode|pass|pwd|otp|totp|sign|signature|sig|cookie|session|credentials?)(?:[^a-z]|$)/i;
/** A key word with a prefix that makes it a credential: `appkey`, `license_key`, `clientKey`. */
const PREFIXED_KEY =
  /(?:^|[^a-z])(?:app|api|access|secret|private|license|licence|client|master|signing|encryption|auth|session|account|subscription|consumer|shared|service|developer|dev|partner|product|webhook)[-_ ]?keys?(?:[^a-z]|$)/i;
/** Any word ending in `key`: in a header name (`X-Appkey`, `X-Helpdesk-Key`) it is the credential. */
const ANY_KEY = /(?:^|[^a-z])[a-z]*keys?(?:[^a-z]|$)/i;
/**
 * Header and query names that are credentials by their whole name only (`?key=`,
 * OAuth's `?code=`, an `otp`): as spec keys they are ordinary (a target's `key: code`).
 */
const SECRET_WHOLE_NAME = /^(?:key|jwt|code|otp|pin)$/i;

/** Where a name stands: a header, a query parameter, or any other key of a job spec. */
export type SecretNameKind = 'header' | 'query' | 'key';

/**
 * Whether a value under this name is a credential: the one rule for the job-spec check
 * that refuses literal credentials (schema-checks.ts) and for every masking here.
 * `accessToken`, `X-Api-Key`, `client_secret`, `smtp_pass`, `license_key` are secret
 * names anywhere; `X-Appkey` as a header; `code` and `key` as a whole header or query
 * name; `assignee`, `sort_key` and `passenger` are not.
 */
export function isSecretName(name: string, kind: SecretNameKind = 'key'): boolean {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2');
  if (SECRET_WORD.test(words) || PREFIXED_KEY.test(words)) return true;
  if (kind === 'key') return false;
  if (SECRET_WHOLE_NAME.test(name)) return true;
  return kind === 'header' && ANY_KEY.test(words);
}

/**
 * Headers whose values describe the request, not who sends it: every other header of a
 * spec (a custom `X-Helpdesk-Auth`, `X-Tenant`) is masked on the job page unless it holds
 * only `${ENV}` references.
 */
const PLAIN_HEADER =
  /^(?:accept(?:-[a-z-]+)?|content-type|content-language|user-agent|cache-control|pragma|if-[a-z-]+|prefer|x-requested-with|x-request-id|x-correlation-id|origin|referer)$/i;

/** What may stand beside a reference in a credential value: an auth scheme. */
const SCHEME_ONLY = /^\s*(?:bearer|basic|token|digest)?\s*$/i;

/** A value with only references (and an auth scheme) in it shows no secret. */
function onlyReferences(value: string): boolean {
  return HAS_REFERENCE.test(value) && SCHEME_ONLY.test(value.replace(ENV_REFERENCE, ''));
}

/**
 * A URL with its password and the values of its credential query parameters masked;
 * anything that is not an absolute URL comes back as it is.
 */
export function maskUrl(value: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return value;
  let url: URL;
  try {
    url = new URL(value.replace(ENV_REFERENCE, (ref) => `__RB_${Buffer.from(ref).toString('hex')}__`));
  } catch {
    return value;
  }
  let changed = false;
  if (url.password !== '') {
    url.password = '__RB_MASK__';
    changed = true;
  }
  for (const [name, v] of url.searchParams) {
    if (isSecretName(name, 'query') && !/^__RB_[0-9a-f]+__$/.test(v)) {
      url.searchParams.set(name, '__RB_MASK__');
      changed = true;
    }
  }
  if (!changed) return value;
  return url
    .toString()
    .replace(/__RB_([0-9a-f]+)__/g, (_m, hex: string) => Buffer.from(hex, 'hex').toString())
    .replace(/__RB_MASK__/g, MASK);
}

/**
 * A text with every URL in it masked whole: the path of a Slack or Feishu webhook is its
 * token, so even {@link maskUrl}'s readable path would give it away (notification errors).
 */
export function withoutUrls(text: string): string {
  return text.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s'")]+/gi, MASK);
}

/** A connection string or password clause inside SQL text: `password=...`, `IDENTIFIED BY '...'`. */
const SQL_CREDENTIAL =
  /\b((?:password|passwd|pwd|pass|sslpassword|secret|token|api_?key|access_?key|secret_?key)\s*=\s*|identified\s+by\s+)('(?:[^']|'')*'|"[^"]*"|[^\s;,)'"]+)/gi;
/** The password of a URL written inside a longer text. */
const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^\s:@/]+:)[^\s@/]+@/gi;

/** SQL text with its credentials masked: a `query:` may open a dblink or FEDERATED connection. */
export function maskSqlText(text: string): string {
  return text
    .replace(SQL_CREDENTIAL, (_m, lead: string, value: string) => {
      const quote = value.startsWith("'") || value.startsWith('"') ? value[0]! : '';
      return `${lead}${quote}${MASK}${quote}`;
    })
    .replace(URL_PASSWORD, `$1${MASK}@`);
}

/** How the values of a map are judged, from the key that holds the map. */
function kindOfMap(key: string): SecretNameKind {
  if (/^headers$/i.test(key)) return 'header';
  if (/^query$/i.test(key)) return 'query';
  return 'key';
}

function maskValue(value: unknown, key: string, kind: SecretNameKind, byName: boolean): unknown {
  if (typeof value === 'string') {
    if (byName && kind === 'key' && /^query$/i.test(key)) return maskSqlText(value);
    const custom = kind === 'header' && !PLAIN_HEADER.test(key);
    if (byName && (custom || isSecretName(key, kind)) && !onlyReferences(value)) return MASK;
    return maskUrl(value);
  }
  if (Array.isArray(value)) return value.map((item) => maskValue(item, key, kind, byName));
  if (typeof value === 'object' && value !== null) {
    const inner = kindOfMap(key);
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskValue(v, k, inner, byName)]));
  }
  return value;
}

/**
 * A copy of `value` with credential values masked (URLs keep all but their secrets; SQL
 * text keeps all but its passwords; a custom header is masked whole). `byName` false
 * stops masking by key name (a mapping's keys are target fields, such as `sign_up`, and
 * its values column names): URLs are still checked.
 */
export function maskSecrets(value: unknown, key = '', byName = true): unknown {
  return maskValue(value, key, 'key', byName);
}

/** The spec as YAML, secrets masked. */
export function maskedSpecYaml(spec: unknown): string {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return stringify(maskSecrets(spec));
  const masked = Object.fromEntries(
    Object.entries(spec).map(([k, v]) => [k, k === 'fields' ? maskSecrets(v, k, false) : maskSecrets(v, k)]),
  );
  return stringify(masked, { lineWidth: 0 });
}
