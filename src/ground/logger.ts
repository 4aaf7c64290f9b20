import pino from 'pino';
import type { Logger, LoggerOptions, DestinationStream } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths redacted in every log line: credential headers under any prefix, secret
 * settings, and anything named like a password or token wherever it sits.
 */
export const REDACT_PATHS: readonly string[] = [
  'headers.authorization',
  'headers.Authorization',
  'req.headers.authorization',
  'headers["APP-Sign"]',
  'headers["APP-Appkey"]',
  '*.sign',
  '*.appKey',
  '*.token',
  '*.accessToken',
  '*.refreshToken',
  '*.clientSecret',
  '*.password',
  '*.secret',
  'config.sign',
  'config.token',
  'config.oauth.clientSecret',
  'config.oauth.refreshToken',
  'credentials',
];

export interface LoggerFactoryOptions {
  level?: string;
  /** Extra header names to redact (a non-default header prefix). */
  redactHeaders?: readonly string[];
  /** Where to write; stdout by default. */
  destination?: DestinationStream;
  base?: Record<string, unknown>;
}

/** The one logger factory: jobs take `logger.child({ job, runId, batch })`. */
export function createLogger(options: LoggerFactoryOptions = {}): Logger {
  const extra = (options.redactHeaders ?? []).map((name) => `headers["${name}"]`);
  const config: LoggerOptions = {
    level: options.level ?? 'info',
    base: options.base ?? { service: 'rowbridge' },
    redact: { paths: [...REDACT_PATHS, ...extra], censor: '[redacted]' },
    serializers: { err: pino.stdSerializers.err },
  };
  return options.destination === undefined ? pino(config) : pino(config, options.destination);
}
