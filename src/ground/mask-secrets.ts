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
 * Words of key names (headers, query parameters) whose values are credentials. A camel
 * case name is split into words first, so the separator inside `api key` may be a space.
 */
const SECRET_WORD =
  /(?:^|[^a-z])(?:authorization|auth|token|secret|password|passwd|pwd|sign|signature|sig|api[-_ ]?key|apikey|cookie|session|credentials?|private[-_ ]?key|access[-_ ]?key)(?:[^a-z]|$)/i;
/**
 * Query parameters that are credentials by their whole name only (`?key=` of many APIs):
 * as spec keys they are ordinary (a target's `key: code`).
 */
const SECRET_PARAM = /^(?:key|jwt)$/i;

/** `accessToken`, `X-Api-Key`, `client_secret` are secret names; `assignee` is not. */
export function isSecretName(name: string): boolean {
  return SECRET_WORD.test(name.replace(/([a-z0-9])([A-Z])/g, '$1 $2'));
}
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
    if ((isSecretName(name) || SECRET_PARAM.test(name)) && !/^__RB_[0-9a-f]+__$/.test(v)) {
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
 * A copy of `value` with credential values masked (URLs keep all but their secrets).
 * `byName` false stops masking by key name (a mapping's keys are target fields, such as
 * `sign_up`, and its values column names): URLs are still checked.
 */
export function maskSecrets(value: unknown, key = '', byName = true): unknown {
  if (typeof value === 'string') {
    if (byName && isSecretName(key) && !onlyReferences(value)) return MASK;
    return maskUrl(value);
  }
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item, key, byName));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskSecrets(v, k, byName)]));
  }
  return value;
}

/** The spec as YAML, secrets masked. */
export function maskedSpecYaml(spec: unknown): string {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return stringify(maskSecrets(spec));
  const masked = Object.fromEntries(
    Object.entries(spec).map(([k, v]) => [k, k === 'fields' ? maskSecrets(v, k, false) : maskSecrets(v, k)]),
  );
  return stringify(masked, { lineWidth: 0 });
}
