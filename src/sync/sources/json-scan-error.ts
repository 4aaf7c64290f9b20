import { RowbridgeError } from '../../ground/errors.ts';

/** A structural error at a line (the caller adds the file name). */
export class JsonScanError extends RowbridgeError {
  override readonly name = 'JsonScanError';
  override readonly code = 'SOURCE_FORMAT';
  override readonly category = 'config';
  readonly line: number;
  constructor(line: number, message: string) {
    super(message);
    this.line = line;
  }
}
