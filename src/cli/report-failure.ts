import { ConfigError, RowbridgeError } from '../ground/errors.ts';
import { JobSpecError } from '../sync/job-spec/job-spec-error.ts';
import { BackfillRangeError } from '../sync/split-range.ts';
import { UsageError } from './args.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';

/** Prints a command's failure as one clear message (no stack for expected errors). */
export function reportFailure(err: unknown, io: CliIo): number {
  if (err instanceof UsageError || err instanceof BackfillRangeError) {
    io.err(err.message);
    return EXIT.usage;
  }
  if (err instanceof JobSpecError || err instanceof ConfigError || err instanceof RowbridgeError) {
    io.err(err.message);
    return EXIT.failure;
  }
  io.err(err instanceof Error ? (err.stack ?? err.message) : String(err));
  return EXIT.failure;
}
