/**
 * How a setting is read: its parser, and the parsers settings share. A parser names the
 * variable in its message and never echoes a secret's value.
 */
import { ConfigError } from '../src/ground/errors.ts';

export type Parse<T> = (raw: string, name: string) => T;

export interface Setting<T> {
  env: string;
  description: string;
  default?: T;
  secret?: boolean;
  parse: Parse<T>;
}

export const text: Parse<string> = (raw) => raw;

export const positiveNumber: Parse<number> = (raw, name) => {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new ConfigError(`${name} must be a positive number, got "${raw}"`);
  return value;
};

export const positiveInt: Parse<number> = (raw, name) => {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new ConfigError(`${name} must be a whole number of at least 1, got "${raw}"`);
  return value;
};

export const logLevel: Parse<string> = (raw, name) => {
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  if (!levels.includes(raw))
    throw new ConfigError(`${name} must be one of ${levels.join(', ')}, got "${raw}"`);
  return raw;
};

export const ianaZone: Parse<string> = (raw, name) => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: raw });
  } catch {
    throw new ConfigError(
      `${name} must be an IANA time zone name such as Asia/Shanghai or Europe/Berlin, got "${raw}"`,
    );
  }
  return raw;
};

export const memoryMode: Parse<'lean' | 'fast'> = (raw, name) => {
  const mode = raw.toLowerCase();
  if (mode !== 'lean' && mode !== 'fast')
    throw new ConfigError(
      `${name} must be lean or fast, got "${raw}": lean (the default) bounds the heap (about 185 MB for a 1M-row import), fast lets V8 size it (about 375 MB, a tenth less CPU)`,
    );
  return mode;
};

export const flag: Parse<boolean> = (raw, name) => {
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be 1 or 0 (true/false, yes/no, on/off), got "${raw}"`);
};

export const dashboardToken: Parse<string> = (raw, name) => {
  // A short token is guessable over the network; the value itself is never echoed.
  if (raw.length < 16)
    throw new ConfigError(`${name} must be at least 16 characters long (e.g. openssl rand -hex 32)`);
  return raw;
};

export const hookSecret: Parse<string> = (raw, name) => {
  // The value itself is never echoed: it is the secret.
  if (!/^whsec_[A-Za-z0-9+/=]{16,}$/.test(raw))
    throw new ConfigError(
      `${name} must be a Standard Webhooks secret: whsec_ followed by base64 (at least 16 characters)`,
    );
  return raw;
};
