import { RowbridgeError } from '../ground/errors.ts';

/** Ctrl-C (or SIGTERM) stopped the runs and what they held was handed back: exit 130. */
export class RunInterruptedError extends RowbridgeError {
  override name = 'RunInterruptedError';
  override readonly code = 'INTERRUPTED';
}
