/**
 * Reusable zod pieces of the job spec: names, env var references, zones, cron, date
 * formats and the header secret rule. Each message says what is wrong and what is
 * allowed, and never repeats a value that may be a secret.
 */
import { z } from 'zod';
import { isSecretName, maskUrl } from '../../ground/mask-secrets.ts';

/**
 * A short, quoted rendering of a user's value for "got ..." in a message. A URL pasted
 * into the wrong field is shown with its password and credential parameters masked.
 */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    const shown = maskUrl(value);
    const text = shown.length > 40 ? `${shown.slice(0, 37)}...` : shown;
    return JSON.stringify(text);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
}

export const nonEmptyString = z.string().min(1, { error: 'must not be empty' });

/** An integer in [min, max], with both bounds in the message. */
export function intRange(min: number, max: number): z.ZodInt {
  const error = (issue: { input?: unknown }): string =>
    `must be a whole number from ${min} to ${max}; got ${describeValue(issue.input)}`;
  return z.int({ error }).min(min, { error }).max(max, { error });
}

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

/**
 * The NAME of an environment variable. A value that looks like a connection URL is
 * refused without echoing it: it probably carries a password.
 */
export function envVarName(example: string): z.ZodString {
  return z.string().superRefine((value, ctx) => {
    if (/:\/\/|^[a-z]+:|@/i.test(value)) {
      ctx.addIssue({
        code: 'custom',
        message:
          `must be the NAME of an environment variable that holds the connection URL, not the URL itself ` +
          `(put the URL in an env var, e.g. ${example}=postgres://..., and write ${example})`,
      });
    } else if (!ENV_NAME.test(value)) {
      ctx.addIssue({
        code: 'custom',
        message: `must be an environment variable name: upper-case letters, digits and _ (e.g. ${example}); got ${describeValue(value)}`,
      });
    }
  });
}

/** A prefix of environment variable names, e.g. `OTHER_APP_` for OTHER_APP_APPKEY. */
export const envPrefix = z.string().regex(/^[A-Z_][A-Z0-9_]*$/, {
  error: (issue) =>
    `must be an environment variable name prefix: upper-case letters, digits and _ (e.g. OTHER_APP_); got ${describeValue(issue.input)}`,
});

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** An IANA time zone name that this Node's Intl knows. */
export const timeZone = z.string().refine(isTimeZone, {
  error: (issue) =>
    `must be an IANA time zone such as UTC, Asia/Shanghai or Europe/Berlin; got ${describeValue(issue.input)}`,
});

/**
 * dayjs parse tokens. Lower-case y and d are not year/day in dayjs (d is the weekday and
 * is never parsed), yet "dd/mm/yyyy" is the commonest spreadsheet habit: catch it here
 * rather than as every row's date silently failing.
 */
export const dateFormat = z.string().superRefine((value, ctx) => {
  const outsideLiterals = value.replace(/\[[^\]]*\]/g, '');
  if (/[yd]/.test(outsideLiterals)) {
    ctx.addIssue({
      code: 'custom',
      message: `must use dayjs tokens, which are case-sensitive: YYYY year, MM month, DD day, HH hour, mm minute, ss second (e.g. DD/MM/YYYY); got ${describeValue(value)}`,
    });
  } else if (!/[YMDHhmsSXxQ]/.test(outsideLiterals)) {
    ctx.addIssue({
      code: 'custom',
      message: `must contain at least one dayjs token (YYYY, MM, DD, HH, mm, ss, X, x); got ${describeValue(value)}`,
    });
  }
});

const ENV_REFERENCE = /\$\{[A-Z_][A-Z0-9_]*\}/g;
const AUTH_SCHEME = /^\s*(?:Bearer|Basic|Token|Bot|Digest|ApiKey)?\s*$/i;

/**
 * Whether a header or query parameter of this name carries a credential: the same rule
 * the job page masks by (ground/mask-secrets.ts), so a name the page would hide cannot
 * hold a literal credential either.
 */
function isCredentialName(name: string, kind: 'header' | 'query'): boolean {
  return isSecretName(name, kind);
}

/**
 * A string map (http headers or query) in which credentials may only come from the
 * environment: `${API_TOKEN}`, optionally after an auth scheme ("Bearer ${API_TOKEN}").
 */
export function credentialSafeMap(kind: 'header' | 'query'): z.ZodRecord<z.ZodString, z.ZodString> {
  return z.record(z.string(), z.string()).superRefine((map, ctx) => {
    for (const [name, value] of Object.entries(map)) {
      if (!isCredentialName(name, kind)) continue;
      const references = value.match(ENV_REFERENCE) ?? [];
      const rest = value.replace(ENV_REFERENCE, '');
      if (references.length === 0 || !AUTH_SCHEME.test(rest)) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message:
            `looks like a credential written into the job: use an environment variable reference ` +
            `such as "\${ENV_NAME}" or "Bearer \${ENV_NAME}" and set ENV_NAME in the environment`,
        });
      }
    }
  });
}

/** An SQL identifier, optionally schema-qualified: the sources quote it, never splice text. */
export const sqlIdentifier = z.string().regex(/^[A-Za-z_][A-Za-z0-9_$]*(?:\.[A-Za-z_][A-Za-z0-9_$]*)?$/, {
  error: (issue) =>
    `must be a table or column name (letters, digits, _ and $, optionally schema.name); got ${describeValue(issue.input)}`,
});
