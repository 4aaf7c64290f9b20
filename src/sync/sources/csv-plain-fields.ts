/**
 * The scanner's field-level reads of decoded CSV text (csv-scanner.ts): the fields of an
 * unquoted line split or counted, and the first field of a held record over the cap.
 */

const LF = 10;
const CR = 13;

/** The delimiter and quote as the scanner reads them (csv-scanner.ts). */
export interface CsvSyntax {
  /** Char code of the field delimiter. */
  delimiter: number;
  /** Char code of the quote. */
  quote: number;
  quoteChar: string;
  /** Whether doubling the quote escapes it (csv-parse's escape is `"` whatever the quote). */
  escapeIsQuote: boolean;
}

/** Fields of the unquoted text [start, end): split at every delimiter. */
export function splitPlain(text: string, start: number, end: number, delimiterChar: string): string[] {
  const fields: string[] = [];
  let from = start;
  for (;;) {
    const at = text.indexOf(delimiterChar, from);
    if (at === -1 || at >= end) {
      fields.push(text.slice(from, end));
      return fields;
    }
    fields.push(text.slice(from, at));
    from = at + 1;
  }
}

/** How many fields the unquoted text [start, end) holds. */
export function countPlain(text: string, start: number, end: number, delimiterChar: string): number {
  let count = 1;
  for (
    let at = text.indexOf(delimiterChar, start);
    at !== -1 && at < end;
    at = text.indexOf(delimiterChar, at + 1)
  )
    count += 1;
  return count;
}

/**
 * The first field of the unfinished record `text` starts that is longer than `maxField`
 * (the last may still be arriving); undefined when none is. Quoting as scanRecord reads it.
 */
export function longField(text: string, maxField: number, syntax: CsvSyntax): number | undefined {
  const { delimiter, quote, quoteChar, escapeIsQuote } = syntax;
  let pos = 0;
  for (let field = 0; pos <= text.length; field++) {
    let end: number;
    if (text.charCodeAt(pos) === quote) {
      let at = pos + 1;
      for (;;) {
        const close = text.indexOf(quoteChar, at);
        if (close === -1) {
          end = text.length;
          break;
        }
        if (escapeIsQuote && text.charCodeAt(close + 1) === quote) {
          at = close + 2;
          continue;
        }
        end = close + 1;
        break;
      }
      if (end - pos - 2 > maxField || (end === text.length && end - pos - 1 > maxField)) return field;
    } else {
      end = pos;
      while (end < text.length) {
        const code = text.charCodeAt(end);
        if (code === delimiter || code === LF || code === CR) break;
        end += 1;
      }
      if (end - pos > maxField) return field;
    }
    if (end >= text.length || text.charCodeAt(end) !== delimiter) return undefined;
    pos = end + 1;
  }
  return undefined;
}
