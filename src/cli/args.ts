import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { RowbridgeError } from '../ground/errors.ts';
import type { ErrorCategory } from '../ground/errors.ts';

/** A usage error: the CLI prints it with the command's usage and exits 64. */
export class UsageError extends RowbridgeError {
  override name = 'UsageError';
  override readonly code: string = 'ROWBRIDGE_USAGE_ERROR';
  // The command line is the caller's configuration: retrying it mends nothing.
  override readonly category: ErrorCategory = 'config';
}

/** node:util's messages, said as the rest of the CLI says things (and naming the known options). */
function usageMessage(err: unknown, known: readonly string[]): string {
  const { code, message } = err as { code?: string; message: string };
  const option = /'(-{1,2}[^' ]+)/.exec(message)?.[1];
  const positional = /argument '([^']*)'/.exec(message)?.[1];
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${option ?? message} (options: ${known.join(', ') || 'none'})`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /argument missing|ambiguous/.test(message) && option !== undefined
        ? `${option} needs a value`
        : message;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument "${positional ?? message}"`;
    default:
      return message;
  }
}

/**
 * The CLI's one argument parser: node:util parseArgs, strict (unknown options are
 * errors), its errors turned into UsageErrors that name the option.
 */
export function parseCliArgs<T extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: T,
  allowPositionals = true,
) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (err) {
    const known = Object.keys(options)
      .filter((name) => name !== 'help')
      .map((name) => `--${name}`);
    throw new UsageError(usageMessage(err, known), { cause: err });
  }
}

/** A positive whole number option, or a UsageError naming it. */
export function positiveInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`--${name} must be a whole number of at least 1, got "${value}"`);
  return n;
}
