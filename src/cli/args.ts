import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';

/** A usage error: the CLI prints it with the command's usage and exits 64. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** node:util parseArgs with strict options, its errors turned into UsageErrors. */
export function parseCliArgs<T extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: T,
  allowPositionals = true,
) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** A positive whole number option, or a UsageError naming it. */
export function positiveInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`--${name} must be a whole number of at least 1, got "${value}"`);
  return n;
}
