/**
 * `${ENV_NAME}` references in job settings, resolved from the environment at run time.
 * A job spec is text anyone with access to the jobs folder can change, and an http
 * source sends what it resolves to a host it names. A deny-list of secret-looking names
 * always missed some (PGPASSWORD, MYSQL_PWD, CRM_APPKEY, another job's urlEnv...), so
 * nothing resolves unless ROWBRIDGE_SOURCE_ENV_ALLOW names it; a glob there never
 * unlocks a name that looks like a credential. `urlEnv` and `credentialsEnvPrefix` are
 * not interpolation: they stay the documented way to reach credentials.
 */
import { readSetting } from '../../../config/settings.ts';
import { readSecretFile } from './secret-file.ts';
import { SourceError } from './source-error.ts';

/** `${NAME}` (group 1) or `${file:/path}` (group 2, ./secret-file.ts). */
const REF = /\$\{(?:([A-Za-z_][A-Za-z0-9_]*)|file:([^}]+))\}/g;

/**
 * Names that look like credentials or connection strings: a glob in
 * ROWBRIDGE_SOURCE_ENV_ALLOW does not unlock them, only the exact name does.
 */
export const PROTECTED_ENV_NAMES = [
  'ROWBRIDGE_*',
  'REDIS_*',
  'PG*',
  'MYSQL*',
  'AWS_*',
  'DATABASE*',
  '*SIGN',
  '*SECRET*',
  '*TOKEN*',
  '*PASS*',
  '*PWD*',
  '*KEY*',
  '*CREDENTIAL*',
  '*AUTH*',
  '*COOKIE*',
  '*SESSION*',
  '*PRIVATE*',
  '*_URL',
  '*_URI',
  '*DSN*',
] as const;

function globMatches(glob: string, name: string): boolean {
  const pattern = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${pattern}$`, 'i').test(name);
}

/**
 * Whether `${name}` may be resolved under ROWBRIDGE_SOURCE_ENV_ALLOW (read from `env`):
 * unset, none; set, the names and globs it lists, a protected name only when listed
 * exactly (`*` does not unlock ROWBRIDGE_SIGN or PGPASSWORD).
 */
export function isEnvRefAllowed(name: string, env: NodeJS.ProcessEnv): boolean {
  const allow = (readSetting('sourceEnvAllow', env) ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (PROTECTED_ENV_NAMES.some((glob) => globMatches(glob, name))) return allow.includes(name);
  return allow.some((glob) => globMatches(glob, name));
}

/** Why `${name}` is refused, for the run's error and for `validate` and `check`. */
export function envRefRefusal(name: string): string {
  return (
    `refers to \${${name}}, which job specs may not read: list ${name} in ROWBRIDGE_SOURCE_ENV_ALLOW ` +
    `to allow it (no variable resolves unless listed; names that look like credentials, ` +
    `such as *KEY*, *PASS*, *TOKEN*, *_URL, must be listed by name, not by a glob)`
  );
}

/** One reference of a text: an environment variable or a secret file. */
export type EnvRef = { kind: 'env'; name: string } | { kind: 'file'; path: string };

/** Every `${NAME}` and `${file:PATH}` a text refers to, in order. */
export function envRefs(text: string): EnvRef[] {
  return [...text.matchAll(REF)].map((m) =>
    m[1] === undefined ? { kind: 'file', path: m[2]! } : { kind: 'env', name: m[1] },
  );
}

/** A value with its references resolved, and the environment values put into it. */
export interface ResolvedValue {
  value: string;
  /** The substituted environment values: secrets from then on, masked in every message. */
  secrets: string[];
}

/**
 * Replaces each `${NAME}` with `env.NAME` and each `${file:PATH}` with the file's content
 * (read now, never kept). An unset or empty variable is an error naming the setting and
 * the variable, never a silent empty header.
 */
export function resolveEnvRefs(text: string, env: NodeJS.ProcessEnv, setting: string): ResolvedValue {
  const secrets: string[] = [];
  // Every name is checked before any is used: a refused one stops the source before a request.
  for (const [, name] of text.matchAll(REF)) {
    if (name !== undefined && !isEnvRefAllowed(name, env)) {
      throw new SourceError('SOURCE_CONFIG', `${setting} ${envRefRefusal(name)}`);
    }
  }
  const value = text.replace(REF, (_match, name: string | undefined, file: string | undefined) => {
    if (name === undefined) {
      const content = readSecretFile(file!, env, setting);
      secrets.push(content);
      return content;
    }
    const found = env[name];
    if (found === undefined || found === '') {
      throw new SourceError(
        'SOURCE_CONFIG',
        `${setting} refers to \${${name}}, but the environment variable ${name} is not set`,
      );
    }
    secrets.push(found);
    return found;
  });
  return { value, secrets };
}

/** Resolves every value of a record; returns the values and the secrets among them. */
export function resolveEnvRecord(
  values: Record<string, string> | undefined,
  env: NodeJS.ProcessEnv,
  setting: string,
  /** The spec field holding the record, e.g. `source.headers`. */
  field: string,
): { values: Record<string, string>; secrets: string[] } {
  const out: Record<string, string> = {};
  const secrets: string[] = [];
  for (const [key, text] of Object.entries(values ?? {})) {
    const resolved = resolveEnvRefs(text, env, `${setting} "${key}" (${field}.${key})`);
    out[key] = resolved.value;
    // The whole value is masked, not just the variable: "Bearer " + token is the credential.
    if (resolved.secrets.length > 0) secrets.push(resolved.value, ...resolved.secrets);
  }
  return { values: out, secrets };
}

/**
 * The connection URL held by the environment variable a job names (`urlEnv`). Jobs name
 * the variable, never the URL, so credentials stay out of job files and Redis.
 */
export function requireEnvUrl(env: NodeJS.ProcessEnv, urlEnv: string, who: string): string {
  const url = env[urlEnv];
  if (url === undefined || url.trim() === '') {
    throw new SourceError(
      'SOURCE_CONFIG',
      `${who}: urlEnv names ${urlEnv}, but that environment variable is not set`,
    );
  }
  return url;
}
