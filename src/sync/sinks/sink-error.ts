import { RowbridgeError } from '../../ground/errors.ts';
import type { ErrorCategory } from '../../ground/errors.ts';
/**
 * Errors of the sinks. `SINK_INVALID_RECORD` lists the offending records of the batch
 * (`recordIndexes`, 0-based in the array given to `write`) and nothing of that batch was
 * written, so the engine can dead-letter those and write the rest again.
 */
export type SinkErrorCode =
  /** The sink's settings cannot work: unset env var, missing table or column, no unique key. */
  | 'SINK_CONFIG'
  /** Some records of the batch cannot be stored as they are. */
  | 'SINK_INVALID_RECORD'
  /** The target failed (connection, disk) or the sink was used after close. */
  | 'SINK_UNAVAILABLE';

export class SinkError extends RowbridgeError {
  override readonly name = 'SinkError';
  override readonly code: SinkErrorCode;
  /** Settings are `config`; invalid records are row-level; an unavailable target is `transient`. */
  override readonly category: ErrorCategory;
  /** For `SINK_INVALID_RECORD`: which records of the batch, when known. */
  readonly recordIndexes: number[];

  constructor(code: SinkErrorCode, message: string, recordIndexes: number[] = []) {
    super(message);
    this.code = code;
    this.category =
      code === 'SINK_CONFIG' ? 'config' : code === 'SINK_INVALID_RECORD' ? 'invalid-row' : 'transient';
    this.recordIndexes = recordIndexes;
  }
}
