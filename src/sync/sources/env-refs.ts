/** `${ENV_NAME}` references in job settings, resolved from the environment at run time. */
import { SourceError } from './source-error.ts';

const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

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
  const value = text.replace(REF, (_match, name: string) => {
    const found = env[name];
    if (found === undefined || found === '') {
      throw new SourceError('SOURCE_CONFIG', `${setting} refers to \${${name}}, but the environment variable ${name} is not set`);
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
): { values: Record<string, string>; secrets: string[] } {
  const out: Record<string, string> = {};
  const secrets: string[] = [];
  for (const [key, text] of Object.entries(values ?? {})) {
    const resolved = resolveEnvRefs(text, env, `${setting} "${key}"`);
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
    throw new SourceError('SOURCE_CONFIG', `${who}: urlEnv names ${urlEnv}, but that environment variable is not set`);
  }
  return url;
}
