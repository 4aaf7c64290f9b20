import path from 'node:path';
import type { ClientEvent } from '../api/create-api-client.ts';
import { loadSettings } from '../../config/settings.ts';
import { createLogger } from '../ground/logger.ts';
import { createRuntime } from '../queue/runtime.ts';
import type { Runtime } from '../queue/runtime.ts';
import type { CliIo } from './io.ts';

/**
 * The runtime of a CLI command. Logs go to stderr (stdout carries the command's
 * output, e.g. --json) at the configured level.
 */
export function openRuntime(
  io: CliIo,
  options: {
    quiet?: boolean;
    /** Draws a progress bar on a terminal: log lines would tear it, so only warnings show there. */
    interactive?: boolean;
    jobsDir?: string;
    onClientEvent?: (event: ClientEvent) => void;
  } = {},
): Runtime {
  const settings = loadSettings(io.env);
  const logger = createLogger({
    level:
      options.quiet === true ||
      (options.interactive === true && io.isTty && io.env.ROWBRIDGE_LOG_LEVEL === undefined)
        ? 'warn'
        : settings.logLevel,
    redactHeaders: [`${settings.headerPrefix}Sign`, `${settings.headerPrefix}Appkey`],
    destination: process.stderr,
  });
  return createRuntime({
    settings,
    env: io.env,
    logger,
    jobsDir: options.jobsDir ?? settings.jobsDir ?? path.join(io.cwd, 'jobs'),
    ...(options.onClientEvent === undefined ? {} : { onClientEvent: options.onClientEvent }),
  });
}

/** A job given as a name (`orders`) or as a path to its file (`jobs/orders.yaml`). */
export function resolveJobArg(arg: string, io: CliIo): { name: string; jobsDir?: string } {
  if (/\.ya?ml$/.test(arg)) {
    const file = path.resolve(io.cwd, arg);
    return { name: path.basename(file).replace(/\.ya?ml$/, ''), jobsDir: path.dirname(file) };
  }
  return { name: arg };
}
