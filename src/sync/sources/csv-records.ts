/**
 * The raw records of a CSV file: the scanner of csv-scanner.ts reads the file while it is
 * sure of it, and csv-parse reads on from the start of the first record the scanner is
 * not sure of (or the whole file, for a dialect or a byte-order mark the scanner leaves
 * alone). Both give the same fields and the same start lines, so the reader built on
 * this (csv-source.ts) behaves as it did with csv-parse alone; test/unit/sync/sources/
 * csv-scanner.test.ts compares the two over generated files cut into chunks of every size.
 */
import { Readable, pipeline } from 'node:stream';
import { CsvError, parse, type Info, type Options } from 'csv-parse';
import { createCsvDecoder, isIconvEncoding } from './csv-decoder.ts';
import { detectCsvDelimiter, firstLine } from './csv-delimiter.ts';
import { createCsvScanner } from './csv-scanner.ts';
import type { CsvSourceSpec } from './source-spec.ts';

/** One record as the file holds it: its fields and the physical line (1-based) it starts on. */
export interface RawCsvRecord {
  fields: string[];
  line: number;
}

export interface CsvRecordsOptions {
  /** Turns a csv-parse error into the error to throw; `lineOffset` is added to csv-parse's line count. */
  onCsvError(err: CsvError, lineOffset: number): Error;
  /**
   * Longest field read, in characters: a longer one ends the read with
   * {@link CsvRecordsOptions.onOversizedField} before more than this (and one chunk) is
   * held. Where csv-parse reads, a record is capped at this many characters per column.
   * @defaultValue no limit
   */
  maxFieldChars?: number | undefined;
  /** The error for a field over `maxFieldChars`: the line its record starts on, its index (0-based). */
  onOversizedField?(line: number, field: number): Error;
  /**
   * Judges the file's first line as written (quotes and delimiters included, no byte-order
   * mark) before any record is read: an error to end the read with, or undefined.
   */
  onFirstLine?(line: string, delimiter: string): Error | undefined;
}

/** Columns assumed for csv-parse's record cap before any record was seen (a file csv-parse reads whole). */
const UNKNOWN_WIDTH = 64;

/** Line breaks inside quoted fields: each one moves the next record's line. */
function countLineBreaks(fields: readonly string[]): number {
  let count = 0;
  for (const field of fields) {
    if (field.includes('\n') || field.includes('\r')) count += field.match(/\r\n|\r|\n/g)?.length ?? 0;
  }
  return count;
}

/**
 * Records read by csv-parse from `source`, in batches as they come. `bom`, `encoding` and
 * `recordDelimiter` say where in the file the source starts: at its first byte (the mark
 * is csv-parse's to skip, the delimiter its to find), or at a record the scanner stopped
 * at, in text it decoded (UTF-8 now) with the record delimiter it found.
 */
async function* parseRecords(
  source: Readable,
  options: Options,
  startLine: number,
  handle: CsvRecordsOptions,
): AsyncGenerator<RawCsvRecord[]> {
  let parser;
  try {
    parser = parse({ ...options, relax_column_count: true, info: true });
  } catch (err) {
    source.destroy();
    if (err instanceof CsvError) throw handle.onCsvError(err, startLine - 1);
    throw err;
  }
  // Errors of either stream end the iteration below; the callback only has to exist.
  pipeline(source, parser, () => undefined);
  let nextLine = startLine;
  let emptyLinesSeen = 0;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: Info }>) {
      // Physical line where the record starts: csv-parse's own counter gives the end line
      // and is off for CRLF files, so count skipped blank lines and quoted breaks here.
      const line = nextLine + (info.empty_lines - emptyLinesSeen);
      emptyLinesSeen = info.empty_lines;
      nextLine = line + 1 + countLineBreaks(record);
      yield [{ fields: record, line }];
    }
  } catch (err) {
    // Leaving the loop early (a consumer's break, an error) destroys the parser already
    // (the async iterator of a stream does), and the pipeline then closes the source.
    if (err instanceof CsvError) throw handle.onCsvError(err, startLine - 1);
    throw err;
  }
}

/** How the rest of a file reaches csv-parse after the scanner: as the text it decoded, in UTF-8. */
interface Recode {
  chunk(bytes: Buffer): Buffer;
  end(): Buffer;
}

/** The bytes of `first`, then the rest of `chunks` (recoded), as a stream for csv-parse. */
function resume(first: Buffer, chunks: AsyncIterator<Buffer>, recode?: Recode): Readable {
  async function* all(): AsyncGenerator<Buffer> {
    if (first.length > 0) yield first;
    for (let next = await chunks.next(); next.done !== true; next = await chunks.next())
      yield recode === undefined ? next.value : recode.chunk(next.value);
    const last = recode?.end();
    if (last !== undefined && last.length > 0) yield last;
  }
  return Readable.from(all(), { objectMode: false });
}

/**
 * The records of the CSV file whose bytes `chunks` streams, with the csv source's options,
 * in batches (one per chunk on the scanner's path). The caller handles the header, and
 * closes the file however the read ends.
 */
export async function* readCsvRecords(
  chunks: AsyncIterable<Buffer>,
  spec: CsvSourceSpec,
  handle: CsvRecordsOptions,
): AsyncGenerator<RawCsvRecord[]> {
  const maxField = handle.maxFieldChars;
  // csv-parse caps a record, not a field: the cap times the columns bounds what it buffers.
  const recordCap = (width: number): Options =>
    maxField === undefined ? {} : { max_record_size: maxField * Math.max(width, 1) };
  const encoding = spec.encoding ?? 'utf8';
  const iterator = chunks[Symbol.asyncIterator]();
  const decoder = createCsvDecoder(encoding, false);
  const recode: Recode = {
    chunk: (bytes) => Buffer.from(decoder.decode(bytes) ?? ''),
    end: () => Buffer.from(decoder.end() ?? ''),
  };
  // The delimiter is told once, from the start of the file (csv-delimiter.ts); the bytes
  // read until then are kept for csv-parse in case the scanner cannot read this file.
  const consumed: Buffer[] = [];
  let next = await iterator.next();
  let text: string | undefined;
  for (;;) {
    if (next.done !== true) consumed.push(next.value);
    text = next.done === true ? decoder.end() : decoder.decode(next.value);
    if (text !== '' || next.done === true) break;
    next = await iterator.next();
  }
  const delimiter = spec.delimiter ?? (text === undefined ? ',' : detectCsvDelimiter(text, spec.quote));
  const refused =
    text === undefined ? undefined : handle.onFirstLine?.(firstLine(text.replace(/^\ufeff/, '')), delimiter);
  if (refused !== undefined) {
    await iterator.return?.();
    throw refused;
  }
  const options: Options = {
    delimiter,
    quote: spec.quote ?? '"',
    skip_empty_lines: spec.skipEmptyLines ?? true,
  };
  const scanner = createCsvScanner({
    delimiter,
    quote: spec.quote,
    skipEmptyLines: spec.skipEmptyLines,
    build: true,
    maxFieldChars: maxField,
  });
  const fromStart = (): AsyncGenerator<RawCsvRecord[]> => {
    const cap = recordCap(UNKNOWN_WIDTH);
    // csv-parse has no GBK: it reads what iconv-lite decoded, as UTF-8.
    if (isIconvEncoding(encoding)) {
      const first = Buffer.from(text ?? '');
      const rest = next.done === true ? resume(first, iterator) : resume(first, iterator, recode);
      return parseRecords(rest, { ...options, ...cap, bom: false, encoding: 'utf8' }, 1, handle);
    }
    return parseRecords(
      resume(Buffer.concat(consumed), iterator),
      { ...options, ...cap, bom: true, encoding },
      1,
      handle,
    );
  };
  if (scanner === undefined || text === undefined) {
    yield* fromStart();
    return;
  }
  consumed.length = 0;
  let batch: RawCsvRecord[] = [];
  let width = 0;
  const onRecord = (fields: string[] | undefined, count: number, line: number): void => {
    if (width === 0) width = count;
    batch.push({ fields: fields!, line });
  };
  for (let first = true; ; first = false) {
    if (!first) {
      next = await iterator.next();
      text = next.done === true ? decoder.end() : decoder.decode(next.value);
    }
    // Undefined only at the start of the file, which was decoded above.
    if (text === undefined) throw new Error('the CSV decoder refused text after the start of the file');
    const sure = scanner.push(text, onRecord) && (next.done !== true || scanner.end(onRecord));
    if (batch.length > 0) {
      const out = batch;
      batch = [];
      yield out;
    }
    // After the records before it: the reader knows the header when it names the field.
    const oversized = scanner.oversized();
    if (oversized !== undefined) {
      throw (
        handle.onOversizedField?.(oversized.line, oversized.field) ??
        new Error(`line ${oversized.line}: field ${oversized.field + 1} is too long`)
      );
    }
    if (!sure) {
      // From the record in doubt on, csv-parse reads the text as the scanner decoded it.
      const rest = Buffer.from(scanner.rest());
      const recordDelimiter = scanner.recordDelimiter();
      yield* parseRecords(
        next.done === true ? resume(rest, iterator) : resume(rest, iterator, recode),
        {
          ...options,
          ...recordCap(width === 0 ? UNKNOWN_WIDTH : width),
          bom: false,
          encoding: 'utf8',
          ...(recordDelimiter === undefined ? {} : { record_delimiter: recordDelimiter }),
        },
        scanner.line(),
        handle,
      );
      return;
    }
    if (next.done === true) return;
  }
}
