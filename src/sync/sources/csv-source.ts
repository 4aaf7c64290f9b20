/**
 * CSV source: the records of csv-records.ts (a scanner of ours for the sound part of a
 * file, csv-parse from the first record it is not sure of), a chunk's records at a time.
 *
 * A row whose field count differs from the header is yielded as an invalid record (the
 * engine dead-letters it and reads on). Broken quoting is fatal: after an unclosed quote
 * the parser cannot know where the next record starts, and guessing would shift data
 * between columns silently, so the read stops with the file and line.
 */
import type { CsvError } from 'csv-parse';
import type { CsvSourceSpec } from './source-spec.ts';
import type { SourceDeps } from './source-deps.ts';
import { createCursorFilter } from './cursor-filter.ts';
import { readCsvRecords } from './csv-records.ts';
import { delimiterHint } from './csv-delimiter.ts';
import { readSetting } from '../../../config/settings.ts';
import { openSourceFile } from './file-input.ts';
import { withRecordChunks, type ChunkedSource } from './record-chunks.ts';
import { invalidRecord, SourceError, type SourceItem } from './source-error.ts';

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

function fatalCsvError(err: CsvError, file: string, spec: CsvSourceSpec, lineOffset: number): SourceError {
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
  // csv-parse counts lines itself (from where it started reading: lineOffset lines into
  // the file); it is exact for LF files and may run ahead in CRLF files with quoted line
  // breaks, hence "near".
  const line = lineOffset + Number((err as { lines?: unknown }).lines);
  if (err.code === 'CSV_MAX_RECORD_SIZE') {
    return new SourceError(
      'SOURCE_FORMAT',
      `${file} near line ${line}: a record holds more characters than ROWBRIDGE_MAX_CELL_BYTES allows ` +
        `per column; the file was not read on: shorten its cells, or raise ROWBRIDGE_MAX_CELL_BYTES`,
      { cause: err },
    );
  }
  return new SourceError('SOURCE_FORMAT', `${file} near line ${line}: malformed CSV: ${reason}`, {
    cause: err,
  });
}

/**
 * Streams the records of a CSV file, a file chunk's records at a time (see
 * record-chunks.ts: a consumer that takes chunks skips the per-record async iteration).
 */
export async function* readCsvChunks(spec: CsvSourceSpec, deps: SourceDeps): AsyncGenerator<SourceItem[]> {
  // Before the file is opened: a range read without a cursor field fails without leaking it.
  const keep = createCursorFilter(deps.since, deps.cursorField, deps, `csv source ${spec.path}`);
  // Without a cursor field every record is kept: no decision object per record.
  const filtered = deps.cursorField !== undefined;
  const { file, stream } = await openSourceFile(spec.path, deps.baseDir, { signal: deps.signal });
  // A cell over the cap is dead-lettered when read (read-batches.ts); one over it in
  // characters is refused while scanning, before the field is held (a 150 MB cell
  // peaked at 643 MB when csv-parse buffered it).
  const maxCellBytes = readSetting('maxCellBytes', deps.env) ?? 1_048_576;
  let header: string[] | undefined;
  let index = 0;
  try {
    const batches = readCsvRecords(stream as AsyncIterable<Buffer>, spec, {
      onCsvError: (err, lineOffset) => fatalCsvError(err, file, spec, lineOffset),
      maxFieldChars: maxCellBytes,
      onOversizedField: (line, field) => {
        const name = header?.[field] ?? (spec.header === false ? `col${field + 1}` : `column ${field + 1}`);
        return new SourceError(
          'SOURCE_FORMAT',
          `${file} line ${line}: field ${name} holds more than ${maxCellBytes} characters, over ` +
            `ROWBRIDGE_MAX_CELL_BYTES (${maxCellBytes} bytes); the file was not read on: ` +
            `shorten the cell, or raise ROWBRIDGE_MAX_CELL_BYTES`,
        );
      },
      // Without a header the columns are named col1..colN by the first line, so a mapping of
      // col1 finds its column however the line was split: only the line itself shows a
      // stated delimiter it lacks. (With a header, the mapped-column check names it.)
      onFirstLine: (line, delimiter) => {
        if (spec.header !== false || spec.delimiter === undefined) return undefined;
        const hint = delimiterHint(line, delimiter, spec.quote, 'line 1');
        return hint === undefined
          ? undefined
          : new SourceError('SOURCE_CONFIG', `csv source ${file}: ${hint}`);
      },
    });
    for await (const batch of batches) {
      // A chunk is built without awaiting, so an abort can only have landed before it.
      deps.signal?.throwIfAborted();
      const items: SourceItem[] = [];
      for (const { fields: record, line } of batch) {
        if (header === undefined) {
          if (spec.header ?? true) {
            header = checkHeader(record, file, line);
            continue;
          }
          header = record.map((_, i) => `col${i + 1}`);
        }
        if (record.length !== header.length) {
          const what = spec.header === false ? 'the first row has' : 'the header has';
          items.push(
            invalidRecord(
              { index: index++, line },
              `${file} line ${line}: ${record.length} fields, but ${what} ${header.length}`,
              header,
            ),
          );
          continue;
        }
        // Plain loops and no spread: this runs once per record, a million times in a big import.
        const data: Record<string, unknown> = {};
        for (let i = 0; i < header.length; i++) data[header[i]!] = record[i];
        if (!filtered) {
          items.push({ data, position: { index: index++, line } });
          continue;
        }
        const decision = keep(data);
        if (!decision.keep) continue;
        const position = { index: index++, line };
        items.push('cursor' in decision ? { data, position, cursor: decision.cursor } : { data, position });
      }
      if (items.length > 0) yield items;
    }
  } catch (err) {
    // An abort while the file is read errors the stream; the read ends with the abort itself.
    deps.signal?.throwIfAborted();
    throw err;
  } finally {
    // However the read ends (the end, an error, a consumer's break), the file is closed.
    stream.destroy();
  }
}

/** Streams the records of a CSV file: one at a time, or a chunk at a time through `recordChunks`. */
export function readCsvSource(
  spec: CsvSourceSpec,
  deps: SourceDeps,
): AsyncGenerator<SourceItem> & ChunkedSource<SourceItem> {
  return withRecordChunks(() => readCsvChunks(spec, deps), deps.signal);
}
