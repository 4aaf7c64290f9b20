/** What the CSV scanner (csv-scanner.ts) takes and hands over. */

/** How the scanner hands a record over: its fields (when built) and count, and the physical line it starts on. */
export type CsvRecordSink = (fields: string[] | undefined, count: number, line: number) => void;

export interface CsvScanner {
  /** Scans the next piece of decoded text. False: the scanner stopped, see {@link CsvScanner.rest}. */
  push(text: string, onRecord: CsvRecordSink): boolean;
  /** Scans what is held at the end of the file. False: the scanner stopped. */
  end(onRecord: CsvRecordSink): boolean;
  /** The text from the start of the record the scanner stopped at (or held back), for csv-parse to read. */
  rest(): string;
  /** Physical line (1-based) of the next record: where `rest()` starts. */
  line(): number;
  /** The record delimiter found so far, as csv-parse found it; undefined before the first. */
  recordDelimiter(): '\n' | '\r\n' | undefined;
  /**
   * Set when the scanner stopped at a field longer than `maxFieldChars`: the line its
   * record starts on and the field's index (0-based). The file cannot be read on: csv-parse
   * would buffer the whole field.
   */
  oversized(): { line: number; field: number } | undefined;
}

export interface CsvScannerOptions {
  /** @defaultValue `','` */
  delimiter?: string | undefined;
  /** @defaultValue `'"'` */
  quote?: string | undefined;
  /** @defaultValue `true` */
  skipEmptyLines?: boolean | undefined;
  /** Build the fields of every record; otherwise only of the first (a header to check) and count the rest. */
  build: boolean;
  /**
   * Longest field, in characters, the scanner holds: past it the scanner stops with
   * {@link CsvScanner.oversized} set, having held at most this plus one chunk.
   * @defaultValue no limit
   */
  maxFieldChars?: number | undefined;
}
