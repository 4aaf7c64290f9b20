/**
 * The bytes of a CSV file as the text the scanner (csv-scanner.ts) reads: the byte-order
 * mark taken off as csv-parse takes it off with `bom: true`, or the file left to csv-parse
 * where its handling of the mark differs from plain decoding. GBK, GB18030 (what Chinese
 * Excel writes by default) and UTF-16LE ("Unicode text") go through iconv-lite's
 * streaming decoder, which keeps a character split across chunks.
 */
import iconv from 'iconv-lite';
import type { CsvEncoding } from './source-spec.ts';

/**
 * Where the text of a CSV file starts after its byte-order mark (0 or 3), or undefined
 * when csv-parse reads the start its own way: a UTF-16 mark (it switches to UTF-16) or a
 * UTF-8 mark in a latin1 file (it switches to UTF-8). `head` holds at least 3 bytes, or
 * the whole file (csv-parse looks for no mark in a file under 3 bytes).
 */
function csvTextStart(head: Uint8Array, encoding: 'utf8' | 'latin1'): number | undefined {
  if (head.length < 3) return 0;
  if (head[0] === 0xff && head[1] === 0xfe) return undefined;
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return encoding === 'utf8' ? 3 : undefined;
  return 0;
}

/** Decodes a CSV file's chunks into the text the scanner reads, after the byte-order mark. */
export interface CsvDecoder {
  /** The text of the next chunk; undefined when the scanner must not read this file (see `head`). */
  decode(chunk: Buffer): string | undefined;
  /** The text held at the end of the file; undefined as for `decode`. */
  end(): string | undefined;
  /** Every byte read so far while `decode` answered undefined at the file's start: csv-parse reads the file from these. */
  head(): Buffer;
}

/** Whether `encoding` is decoded by iconv-lite (not by the scanner's own fast path). */
export function isIconvEncoding(encoding: CsvEncoding): encoding is 'gbk' | 'gb18030' | 'utf16le' {
  return encoding !== 'utf8' && encoding !== 'latin1';
}

/**
 * A decoder for GBK, GB18030 or UTF-16LE. A byte-order mark wins over the job's
 * encoding, as csv-parse lets it win with `bom: true`: Excel's "CSV UTF-8" and "Unicode
 * text" start with one, whatever the job says. Bytes that are no character become U+FFFD.
 */
function createIconvDecoder(encoding: 'gbk' | 'gb18030' | 'utf16le'): CsvDecoder {
  let decoder: ReturnType<typeof iconv.getDecoder> | undefined;
  let head: Buffer = Buffer.alloc(0);
  const open = (bytes: Buffer): string => {
    const utf8Mark = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
    const utf16Mark = bytes[0] === 0xff && bytes[1] === 0xfe;
    decoder = iconv.getDecoder(utf8Mark ? 'utf8' : utf16Mark ? 'utf16le' : encoding, { stripBOM: true });
    return decoder.write(bytes);
  };
  return {
    decode(chunk) {
      if (decoder !== undefined) return decoder.write(chunk);
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      return head.length < 3 ? '' : open(head);
    },
    end() {
      const rest = decoder === undefined ? open(head) : '';
      return rest + (decoder!.end() ?? '');
    },
    head: () => Buffer.alloc(0),
  };
}

/**
 * A decoder for `encoding`. Fatal: bytes that are not UTF-8 answer undefined (the
 * pre-pass then names their line); otherwise they become U+FFFD as csv-parse's
 * Buffer#toString makes them (the same replacement: an ASCII byte is never swallowed, so
 * decoding whole chunks and decoding field by field give the same text).
 */
export function createCsvDecoder(encoding: CsvEncoding, fatal: boolean): CsvDecoder {
  if (isIconvEncoding(encoding)) return createIconvDecoder(encoding);
  // ignoreBOM: the mark is taken off here; a second one is data, as for csv-parse.
  const utf8 = encoding === 'utf8' ? new TextDecoder('utf-8', { fatal, ignoreBOM: true }) : undefined;
  /** Bytes before the mark is known; undefined once it is. */
  let head: Buffer | undefined = Buffer.alloc(0);
  let refused = false;
  const text = (bytes: Buffer, stream: boolean): string | undefined => {
    if (utf8 === undefined) return bytes.toString('latin1');
    try {
      return utf8.decode(bytes, { stream });
    } catch {
      return undefined;
    }
  };
  const start = (bytes: Buffer, final: boolean): string | undefined => {
    const at = csvTextStart(bytes, encoding);
    if (at === undefined) {
      refused = true;
      head = bytes;
      return undefined;
    }
    head = undefined;
    return text(bytes.subarray(at), !final);
  };
  return {
    decode(chunk) {
      if (refused) return undefined;
      if (head === undefined) return text(chunk, true);
      const bytes = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      if (bytes.length < 3) {
        head = bytes;
        return '';
      }
      return start(bytes, false);
    },
    end() {
      if (refused) return undefined;
      if (head !== undefined) return start(head, true);
      return text(Buffer.alloc(0), false);
    },
    head: () => head ?? Buffer.alloc(0),
  };
}
