/**
 * `${ENV_NAME}` references in job settings, resolved from the environment at run time.
 * A job spec is text anyone with access to the jobs folder can change, and an http
 * source sends what it resolves to a host it names: so rowbridge's own secrets
 * (ROWBRIDGE_SIGN, REDIS_URL...) and anything named like a secret resolve only when
 * ROWBRIDGE_SOURCE_ENV_ALLOW names them exactly. `urlEnv` and `credentialsEnvPrefix`
 * are not interpolation: they stay the documented way to reach credentials.
 */
import { readSetting } from '../../../config/settings.ts';
import { SourceError } from './source-error.ts';

const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Names that resolve only when ROWBRIDGE_SOURCE_ENV_ALLOW lists them by name, not by a glob. */
export const PROTECTED_ENV_NAMES = [
  'ROWBRIDGE_*',
  'REDIS_URL',
  '*_SIGN',
  '*_SECRET',
  '*_TOKEN',
  '*_PASSWORD',
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
 * unset, every name but the protected ones; set, the names and globs it lists, and a
 * protected name only when listed exactly (`*` does not unlock ROWBRIDGE_SIGN).
 */
export function isEnvRefAllowed(name: string, env: NodeJS.ProcessEnv): boolean {
  const allow = (readSetting('sourceEnvAllow', env) ?? '*')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (PROTECTED_ENV_NAMES.some((glob) => globMatches(glob, name))) return allow.includes(name);
  return allow.some((glob) => globMatches(glob, name));
}

/** A value with its references resolved, and the environment values put into it. */
export interface ResolvedValue {
  value: string;
  /** The substituted environment values: secrets from then on, masked in every message. */
  secrets: string[];
}

/**
 * Replaces each `${NAME}` with `env.NAME`. An unset or empty variable is an error naming
 * the setting and the variable, never a silent empty header.
 */
export function resolveEnvRefs(text: string, env: NodeJS.ProcessEnv, setting: string): ResolvedValue {
  const secrets: string[] = [];
  // Every name is checked before any is used: a refused one stops the source before a request.
  for (const [, name = ''] of text.matchAll(REF)) {
    if (!isEnvRefAllowed(name, env)) {
      throw new SourceError(
        'SOURCE_CONFIG',
        `${setting} refers to \${${name}}, which job specs may not read: list ${name} in ROWBRIDGE_SOURCE_ENV_ALLOW ` +
          `to allow it (names matching ${PROTECTED_ENV_NAMES.join(', ')} must be listed by name)`,
      );
    }
  }
  const value = text.replace(REF, (_match, name: string) => {
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
