/**
 * Counting the records of a CSV file for the pre-pass (file-prepass.ts) with the scanner
 * of csv-scanner.ts: no record is built, only the header's fields, and the UTF-8 check
 * is the decoding itself (a fatal TextDecoder, as before).
 */
import { createCsvDecoder } from './csv-decoder.ts';
import { createCsvScanner } from './csv-scanner.ts';
import type { CsvRecordSink } from './csv-scanner-types.ts';
import { detectCsvDelimiter } from './csv-delimiter.ts';
import type { CsvSourceSpec } from './source-spec.ts';

/** What the pre-pass learns of a CSV file (file-prepass.ts's PrepassResult). */
export interface CsvCounts {
  /** Records the file holds, the header not counted. */
  records: number;
  /** Records whose field count differs from the header's (or the first row's). */
  invalid: number;
}

/**
 * The records and invalid records of the CSV `chunks` hold, as csv-parse with the reader's
 * options would count them; undefined for anything the scanner is not sure of (including
 * bytes that are not UTF-8 and a header the reader refuses), which the caller then reads
 * with csv-parse to name the line.
 */
export async function countCsvRecords(
  chunks: AsyncIterable<Buffer>,
  spec: CsvSourceSpec,
): Promise<CsvCounts | undefined> {
  const encoding = spec.encoding ?? 'utf8';
  const decoder = createCsvDecoder(encoding, true);
  const iterator = chunks[Symbol.asyncIterator]();
  // The delimiter is told from the start of the file, as the reader tells it (csv-records.ts).
  let next = await iterator.next();
  let text: string | undefined;
  for (;;) {
    text = next.done === true ? decoder.end() : decoder.decode(next.value);
    if (text !== '' || next.done === true) break;
    next = await iterator.next();
  }
  if (text === undefined) return undefined;
  const scanner = createCsvScanner({
    delimiter: spec.delimiter ?? detectCsvDelimiter(text, spec.quote),
    quote: spec.quote,
    skipEmptyLines: spec.skipEmptyLines,
    build: false,
  });
  if (scanner === undefined) return undefined;
  const header = spec.header ?? true;
  const result: CsvCounts = { records: 0, invalid: 0 };
  let width: number | undefined;
  let sound = true;
  const onRecord: CsvRecordSink = (fields, count) => {
    if (width === undefined) {
      width = count;
      if (header) {
        // The reader's header check (csv-source.ts): every column named, no name twice.
        sound = fields !== undefined && !fields.includes('') && new Set(fields).size === fields.length;
        return;
      }
    }
    result.records += 1;
    if (count !== width) result.invalid += 1;
  };
  if (!scanner.push(text, onRecord) || !sound) return undefined;
  if (next.done !== true) {
    for (next = await iterator.next(); next.done !== true; next = await iterator.next()) {
      const chunk = decoder.decode(next.value);
      if (chunk === undefined || !scanner.push(chunk, onRecord) || !sound) return undefined;
    }
    const last = decoder.end();
    if (last === undefined || !scanner.push(last, onRecord)) return undefined;
  }
  if (!scanner.end(onRecord)) return undefined;
  return sound ? result : undefined;
}
