import { RowbridgeError } from '../../ground/errors.ts';
import type { BatchPolicy, ErrorCategory } from '../../ground/errors.ts';

/** A failure that stops the whole run (auth, permission, quota, worksheet gone). */
export class RunStoppedError extends RowbridgeError {
  override name = 'RunStoppedError';
  override readonly code = 'RUN_STOPPED';
  override readonly category: ErrorCategory;
  constructor(message: string, category: ErrorCategory, options?: { cause?: unknown }) {
    super(message, options);
    this.category = category;
  }

  /** Whatever its category, the run stops: that is what this error says. */
  override get batchPolicy(): BatchPolicy {
    return 'stop-run';
  }
}
