/**
 * A CSV scanner for the common file: records found with `indexOf` on decoded text instead
 * of csv-parse's byte-by-byte state machine (about 2.4 µs a record, most of a 1M-row
 * file's pre-pass and read). It reads exactly what csv-parse reads with the options the
 * csv source sets, and nothing else: at the first thing it is not sure csv-parse reads
 * the same way (a lone \r, a \r in an LF file, a bare \n in a CRLF file, a quote inside
 * an unquoted field, text after a closing quote, a quote never closed, the `"` that
 * csv-parse takes as an escape inside fields quoted with another character, a record
 * over {@link MAX_HELD_CHARS}) it stops at the start of that record, and the caller hands
 * the rest to csv-parse (the reader) or to the full path that names the line (the
 * pre-pass). Byte-order marks are csv-decoder.ts's: the scanner gets text.
 *
 * csv-parse facts this mirrors (csv-parse 7, lib/api/index.js): the record delimiter is
 * the first of \r\n, \n or \r seen outside quotes and is the only one for the rest of the
 * file; the escape is `"` whatever the quote, active only inside quoted fields; a closing
 * quote must be followed by the delimiter, the record delimiter or the end; a skipped
 * empty line is one with no character at all; at the end of the file a last line with
 * any character (or a quoted empty field) is a record.
 */
import { countPlain, longField, splitPlain } from './csv-plain-fields.ts';
import type { CsvSyntax } from './csv-plain-fields.ts';
import type { CsvRecordSink, CsvScanner, CsvScannerOptions } from './csv-scanner-types.ts';

/**
 * A record longer than this many characters stops the scanner: it is rescanned from its
 * start with every chunk, so a 100 MB quoted field would cost quadratic time.
 */
export const MAX_HELD_CHARS = 1 << 20;

const LF = 10;
const CR = 13;
const DQ = 34;
/** scanRecord: the record goes on past the text held; wait for more. */
const WAIT = -2;
/** scanRecord: not sure csv-parse reads this record the same way. */
const DOUBT = -1;

function plainCharCode(value: string | undefined, fallback: string): number | undefined {
  const char = value ?? fallback;
  if (char.length !== 1) return undefined;
  const code = char.charCodeAt(0);
  return code < 0x80 && code !== LF && code !== CR ? code : undefined;
}

/**
 * A scanner for the delimiter and quote of a csv source, or undefined when they are not
 * single ASCII characters the scanner knows csv-parse to read like it (csv-parse then
 * reads the whole file, and refuses an invalid option itself).
 */
export function createCsvScanner(options: CsvScannerOptions): CsvScanner | undefined {
  const delimiter = plainCharCode(options.delimiter, ',');
  const quote = plainCharCode(options.quote, '"');
  if (delimiter === undefined || quote === undefined || delimiter === quote) return undefined;
  const delimiterChar = String.fromCharCode(delimiter);
  const quoteChar = String.fromCharCode(quote);
  const doubledQuote = quoteChar + quoteChar;
  // csv-parse's escape is `"` whatever the quote: doubling escapes only when the quote is `"`.
  const escapeIsQuote = quote === DQ;
  const skipEmpty = options.skipEmptyLines ?? true;
  const build = options.build;

  let held = '';
  let line = 1;
  /** 0 until the first record delimiter, then 1 (\n) or 2 (\r\n). */
  let mode: 0 | 1 | 2 = 0;
  let headerPending = true;
  let stopped = false;
  /** Set by scan when it stops at a record in doubt rather than at one still arriving. */
  let doubted = false;

  function emit(onRecord: CsvRecordSink, fields: string[] | undefined, count: number, at: number): void {
    headerPending = false;
    onRecord(fields, count, at);
  }

  /**
   * Length of the record delimiter at `at` (1 or 2), discovering it as csv-parse does;
   * WAIT when the text ends inside it, DOUBT when it is not the file's record delimiter.
   */
  function lineEnd(text: string, at: number, final: boolean): number {
    if (text.charCodeAt(at) === LF) {
      if (mode === 2) return DOUBT;
      mode = 1;
      return 1;
    }
    if (at + 1 >= text.length) return final ? DOUBT : WAIT;
    if (text.charCodeAt(at + 1) !== LF || mode === 1) return DOUBT;
    mode = 2;
    return 2;
  }

  /** Reads one record of any shape from `start`; answers where the next one starts, WAIT or DOUBT. */
  function scanRecord(text: string, start: number, final: boolean, onRecord: CsvRecordSink): number {
    const length = text.length;
    const fields: string[] | undefined = build || headerPending ? [] : undefined;
    let count = 0;
    let breaks = 0;
    let at = start;
    for (;;) {
      let next: number;
      if (at < length && text.charCodeAt(at) === quote) {
        let escaped = false;
        let end = at + 1;
        for (; ; end++) {
          if (end >= length) return final ? DOUBT : WAIT;
          const code = text.charCodeAt(end);
          if (code === quote) {
            if (end + 1 >= length) {
              if (!final) return WAIT;
              break;
            }
            if (escapeIsQuote && text.charCodeAt(end + 1) === quote) {
              escaped = true;
              end += 1;
              continue;
            }
            break;
          }
          if (code === LF) breaks += 1;
          else if (code === CR) {
            if (end + 1 >= length) return final ? DOUBT : WAIT;
            if (text.charCodeAt(end + 1) !== LF) return DOUBT;
          } else if (code === DQ && !escapeIsQuote) return DOUBT;
        }
        if (fields !== undefined) {
          const value = text.slice(at + 1, end);
          fields.push(escaped ? value.replaceAll(doubledQuote, quoteChar) : value);
        }
        count += 1;
        next = end + 1;
        if (next < length) {
          const code = text.charCodeAt(next);
          if (code !== delimiter && code !== LF && code !== CR) return DOUBT;
        }
      } else {
        let end = at;
        for (; end < length; end++) {
          const code = text.charCodeAt(end);
          if (code === delimiter || code === LF || code === CR) break;
          if (code === quote) return DOUBT;
        }
        if (end >= length && !final) return WAIT;
        if (end === start && end < length && skipEmpty && text.charCodeAt(end) !== delimiter) {
          const skip = lineEnd(text, end, final);
          if (skip < 0) return skip;
          line += 1;
          return end + skip;
        }
        fields?.push(text.slice(at, end));
        count += 1;
        next = end;
      }
      if (next >= length) {
        emit(onRecord, fields, count, line);
        return length;
      }
      if (text.charCodeAt(next) === delimiter) {
        at = next + 1;
        continue;
      }
      const size = lineEnd(text, next, final);
      if (size < 0) return size;
      emit(onRecord, fields, count, line);
      line += 1 + breaks;
      return next + size;
    }
  }

  function doubt(pos: number): number {
    doubted = true;
    return pos;
  }

  /** Reads the records of `text`; answers where it stopped (the end, a record still arriving, or one in doubt). */
  function scan(text: string, final: boolean, onRecord: CsvRecordSink): number {
    const length = text.length;
    let pos = 0;
    let nextQuote = -1;
    let nextCr = -1;
    while (pos < length) {
      const lf = mode === 0 ? -1 : text.indexOf('\n', pos);
      if (lf !== -1) {
        if (nextQuote < pos) {
          nextQuote = text.indexOf(quoteChar, pos);
          if (nextQuote === -1) nextQuote = length;
        }
        if (nextQuote > lf) {
          let end = lf;
          if (mode === 2) {
            if (lf === pos || text.charCodeAt(lf - 1) !== CR) return doubt(pos);
            end = lf - 1;
          }
          if (nextCr < pos) {
            nextCr = text.indexOf('\r', pos);
            if (nextCr === -1) nextCr = length;
          }
          if (nextCr < end) return doubt(pos);
          if (end === pos && skipEmpty) {
            line += 1;
          } else if (build || headerPending) {
            const fields = splitPlain(text, pos, end, delimiterChar);
            emit(onRecord, fields, fields.length, line);
            line += 1;
          } else {
            emit(onRecord, undefined, countPlain(text, pos, end, delimiterChar), line);
            line += 1;
          }
          pos = lf + 1;
          continue;
        }
      } else if (mode !== 0 && !final) {
        break;
      }
      const next = scanRecord(text, pos, final, onRecord);
      if (next === DOUBT) return doubt(pos);
      if (next === WAIT) break;
      pos = next;
    }
    return pos;
  }

  const maxField = options.maxFieldChars ?? Infinity;
  const syntax: CsvSyntax = { delimiter, quote, quoteChar, escapeIsQuote };
  let tooLong: { line: number; field: number } | undefined;

  function run(text: string, final: boolean, onRecord: CsvRecordSink): boolean {
    if (stopped) return false;
    doubted = false;
    const pos = scan(text, final, onRecord);
    held = text.slice(pos);
    if (!doubted && held.length > maxField) {
      const field = longField(held, maxField, syntax);
      if (field !== undefined) {
        tooLong = { line, field };
        // Nothing of the field is kept: the caller refuses the file, it does not read on.
        held = '';
        stopped = true;
        return false;
      }
    }
    stopped = doubted || held.length > MAX_HELD_CHARS;
    return !stopped;
  }

  return {
    push(text, onRecord) {
      return run(held === '' ? text : held + text, false, onRecord);
    },
    end(onRecord) {
      if (stopped) return false;
      if (held === '') return true;
      return run(held, true, onRecord);
    },
    rest: () => held,
    line: () => line,
    recordDelimiter: () => (mode === 0 ? undefined : mode === 1 ? '\n' : '\r\n'),
    oversized: () => tooLong,
  };
}
