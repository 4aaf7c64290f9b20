/**
 * CSV source: csv-parse in streaming mode, one record in memory at a time.
 *
 * A row whose field count differs from the header is yielded as an invalid record (the
 * engine dead-letters it and reads on). Broken quoting is fatal: after an unclosed quote
 * the parser cannot know where the next record starts, and guessing would shift data
 * between columns silently, so the read stops with the file and line.
 */
import { pipeline } from 'node:stream';
import { CsvError, parse, type Info } from 'csv-parse';
import type { CsvSourceSpec } from './source-spec.ts';
import type { SourceDeps } from './source-deps.ts';
import { createCursorFilter } from './cursor-filter.ts';
import { openSourceFile } from './file-input.ts';
import { invalidRecord, SourceError, type SourceItem } from './source-error.ts';

/** Line breaks inside quoted fields: each one moves the next record's line. */
function countLineBreaks(fields: readonly string[]): number {
  let count = 0;
  for (const field of fields) {
    if (field.includes('\n') || field.includes('\r')) count += field.match(/\r\n|\r|\n/g)?.length ?? 0;
  }
  return count;
}

function checkHeader(names: readonly string[], file: string, line: number): string[] {
  const seen = new Set<string>();
  names.forEach((name, i) => {
    if (name === '') {
      throw new SourceError(
        'SOURCE_FORMAT',
        `${file} line ${line}: header column ${i + 1} has no name; name every column or set header: false`,
      );
    }
    if (seen.has(name)) {
      throw new SourceError(
        'SOURCE_FORMAT',
        `${file} line ${line}: header column "${name}" appears twice; column names must be unique`,
      );
    }
    seen.add(name);
  });
  return [...names];
}

function fatalCsvError(err: CsvError, file: string, spec: CsvSourceSpec): SourceError {
  const quote = spec.quote ?? '"';
  if (err.code.startsWith('CSV_INVALID_OPTION')) {
    return new SourceError('SOURCE_CONFIG', `csv source ${file}: invalid parser option: ${err.message}`, {
      cause: err,
    });
  }
  // Text after a closing quote is CSV_INVALID_CLOSING_QUOTE only: csv-parse has other
  // codes for it with trim options, and none is set.
  const reason =
    err.code === 'CSV_QUOTE_NOT_CLOSED'
      ? `a field opened with ${quote} is never closed`
      : err.code === 'CSV_INVALID_CLOSING_QUOTE'
        ? `text follows a closing ${quote}; inside a quoted field write the quote twice (${quote}${quote})`
        : err.message;
  // csv-parse counts lines itself; it is exact for LF files and may run ahead in CRLF
  // files with quoted line breaks, hence "near".
  const line = Number((err as { lines?: unknown }).lines);
  return new SourceError('SOURCE_FORMAT', `${file} near line ${line}: malformed CSV: ${reason}`, {
    cause: err,
  });
}

/** Streams the records of a CSV file. */
export async function* readCsvSource(spec: CsvSourceSpec, deps: SourceDeps): AsyncGenerator<SourceItem> {
  // Before the file is opened: a range read without a cursor field fails without leaking it.
  const keep = createCursorFilter(deps.since, deps.cursorField, deps, `csv source ${spec.path}`);
  const { file, stream } = await openSourceFile(spec.path, deps.baseDir, { signal: deps.signal });
  let parser;
  try {
    parser = parse({
      bom: true,
      delimiter: spec.delimiter ?? ',',
      quote: spec.quote ?? '"',
      encoding: spec.encoding ?? 'utf8',
      skip_empty_lines: spec.skipEmptyLines ?? true,
      relax_column_count: true,
      info: true,
    });
  } catch (err) {
    stream.destroy();
    if (err instanceof CsvError) throw fatalCsvError(err, file, spec);
    throw err;
  }
  // Errors of either stream end the iteration below; the callback only has to exist.
  pipeline(stream, parser, () => undefined);
  let header: string[] | undefined;
  let nextLine = 1;
  let emptyLinesSeen = 0;
  let index = 0;
  try {
    for await (const item of parser as AsyncIterable<{ record: string[]; info: Info }>) {
      deps.signal?.throwIfAborted();
      const { record, info } = item;
      // Physical line where the record starts: csv-parse's own counter gives the end line
      // and is off for CRLF files, so count skipped blank lines and quoted breaks here.
      const line = nextLine + (info.empty_lines - emptyLinesSeen);
      emptyLinesSeen = info.empty_lines;
      nextLine = line + 1 + countLineBreaks(record);
      if (header === undefined) {
        if (spec.header ?? true) {
          header = checkHeader(record, file, line);
          continue;
        }
        header = record.map((_, i) => `col${i + 1}`);
      }
      if (record.length !== header.length) {
        const what = spec.header === false ? 'the first row has' : 'the header has';
        yield invalidRecord(
          { index: index++, line },
          `${file} line ${line}: ${record.length} fields, but ${what} ${header.length}`,
        );
        continue;
      }
      // Plain loops and no spread: this runs once per record, a million times in a big import.
      const data: Record<string, unknown> = {};
      for (let i = 0; i < header.length; i++) data[header[i]!] = record[i];
      const decision = keep(data);
      if (!decision.keep) continue;
      const position = { index: index++, line };
      yield 'cursor' in decision ? { data, position, cursor: decision.cursor } : { data, position };
    }
  } catch (err) {
    // Leaving the loop early (a consumer's break, an error) destroys the parser already
    // (the async iterator of a stream does), and the pipeline then closes the file.
    if (err instanceof CsvError) throw fatalCsvError(err, file, spec);
    throw err;
  }
}
