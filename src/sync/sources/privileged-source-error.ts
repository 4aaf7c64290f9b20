import { SourceError } from './source-error.ts';

/** The refusal of a SQL source whose database login can do more than read. */
export function privilegedSourceError(who: string, reasons: readonly string[]): SourceError {
  return new SourceError(
    'SOURCE_CONFIG',
    `${who}: refused: ${reasons.join('; ')}. A source query runs in a READ ONLY transaction, which is no sandbox: such a login can read or write server files, run programs or end other sessions from a SELECT. Connect with a login that has SELECT rights only, or set allowPrivilegedSource: true in the job's source to read with it anyway`,
  );
}
