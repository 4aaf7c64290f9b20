/**
 * File sources are read through once before anything is written: a file that breaks at
 * line 2,900 (a stray quote, invalid UTF-8) used to fail after 2,620 rows had landed,
 * and a re-run of the fixed file wrote them again. Reading a local file twice costs a
 * parse, not a request: bench/prepass.ts measures it on the 1M-row CSV.
 *
 * The pre-pass checks that the bytes are UTF-8 (unless the job names another encoding), naming the
 * line of the first bad byte instead of letting U+FFFD into the worksheet; that the file
 * parses to its end (a thrown SourceError names the line); and counts the records.
 */
import { readSetting } from '../../../config/settings.ts';
import { ConfigError } from '../../ground/errors.ts';
import { countCsvRecords, type CsvCounts } from '../sources/csv-count.ts';
import { openSourceFile, resolveDataFile } from '../sources/file-input.ts';
import type { SourceDeps } from '../sources/source-deps.ts';
import { SourceError } from '../sources/source-error.ts';
import type { CsvSourceSpec, SourceSpec } from '../sources/source-spec.ts';
import { createSource } from '../sources/create-source.ts';

export interface PrepassResult {
  /** Records the file holds (parsed or not). */
  records: number;
  /** Records the parser could not read: they will be dead-lettered one by one. */
  invalid: number;
  /**
   * The source spec with the path the pre-pass read (confined to ROWBRIDGE_DATA_DIR when
   * set): the reader must be handed this one, so it reads the very file that was checked.
   */
  spec: SourceSpec;
}

type FileSpec = Extract<SourceSpec, { type: 'csv' | 'ndjson' | 'json' }>;

export function isFileSource(spec: SourceSpec): spec is FileSpec {
  return spec.type === 'csv' || spec.type === 'ndjson' || spec.type === 'json';
}

/** Length of the UTF-8 sequence a lead byte starts, or 0 when it cannot start one. */
function sequenceLength(byte: number): number {
  if (byte < 0x80) return 1;
  if (byte >= 0xc2 && byte <= 0xdf) return 2;
  if (byte >= 0xe0 && byte <= 0xef) return 3;
  if (byte >= 0xf0 && byte <= 0xf4) return 4;
  return 0;
}

/** Line (1-based) of the first byte of `bytes` that is not well-formed UTF-8; undefined when all are. */
export function firstInvalidUtf8Line(bytes: Uint8Array, startLine = 1): number | undefined {
  let line = startLine;
  for (let i = 0; i < bytes.length;) {
    const byte = bytes[i]!;
    const n = sequenceLength(byte);
    if (n === 0 || i + n > bytes.length) return line;
    for (let k = 1; k < n; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return line;
    // Overlongs and surrogates the lead byte alone does not rule out.
    const second = bytes[i + 1] ?? 0;
    if ((byte === 0xe0 && second < 0xa0) || (byte === 0xed && second > 0x9f)) return line;
    if ((byte === 0xf0 && second < 0x90) || (byte === 0xf4 && second > 0x8f)) return line;
    if (byte === 0x0a) line += 1;
    i += n;
  }
  return undefined;
}

async function checkUtf8(spec: FileSpec, deps: SourceDeps): Promise<void> {
  const { file, stream } = await openSourceFile(spec.path, deps.baseDir, { signal: deps.signal });
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let line = 1;
  // Bytes of a sequence split across chunks, carried into the next one.
  let carry: Uint8Array = new Uint8Array(0);
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const bytes = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    try {
      decoder.decode(chunk, { stream: true });
    } catch {
      const bad = firstInvalidUtf8Line(bytes, line) ?? line;
      stream.destroy();
      throw new SourceError(
        'SOURCE_FORMAT',
        `${file} line ${bad}: not valid UTF-8; save the file as UTF-8, or set source.encoding: gbk (Chinese Excel's CSV), utf16le or latin1`,
      );
    }
    // Keep an unfinished sequence at the end for the line search of the next chunk.
    let cut = bytes.length;
    for (let back = 1; back <= 3 && back <= bytes.length; back++) {
      const b = bytes[bytes.length - back]!;
      if ((b & 0xc0) !== 0x80) {
        if (sequenceLength(b) > back) cut = bytes.length - back;
        break;
      }
    }
    for (let i = 0; i < cut; i++) if (bytes[i] === 0x0a) line += 1;
    carry = bytes.subarray(cut);
  }
  try {
    decoder.decode();
  } catch {
    throw new SourceError(
      'SOURCE_FORMAT',
      `${file} line ${line}: the file ends inside a UTF-8 character; save it as UTF-8`,
    );
  }
}

/**
 * The pre-pass of a sound CSV file in one read and one scan (sources/csv-count.ts): the
 * UTF-8 check is the decoding of the text the scanner reads, and records are counted
 * without being built. A full parse of the 1M-row bench file took 2.0 s with csv-parse;
 * bench/prepass.ts measures the scan. Anything the scanner is not sure of (bad UTF-8, a
 * quoting csv-parse may read otherwise, a header the reader refuses) answers undefined,
 * and the full path below, the one that names the line, runs instead.
 */
async function leanCsvPrepass(spec: CsvSourceSpec, deps: SourceDeps): Promise<CsvCounts | undefined> {
  const { stream } = await openSourceFile(spec.path, deps.baseDir, { signal: deps.signal });
  try {
    return await countCsvRecords(stream as AsyncIterable<Buffer>, spec);
  } catch {
    deps.signal?.throwIfAborted();
    return undefined;
  } finally {
    stream.destroy();
  }
}

/**
 * Reads a file source through before the run writes anything. Throws the SourceError of
 * a file that cannot be read to its end; record-level problems are counted, not thrown
 * (each becomes a dead letter). Not a file source: undefined.
 */
export async function prepassFileSource(
  spec: SourceSpec,
  deps: SourceDeps,
): Promise<PrepassResult | undefined> {
  if (!isFileSource(spec)) return undefined;
  // Resolved once, before a byte is read: every step below and the reader after it read
  // this path. Read unconfined first, an outside file told whether it existed and was
  // UTF-8; read against the jobs folder, a decoy there was checked instead of the data.
  const confined =
    readSetting('dataDir', deps.env) === undefined
      ? spec
      : { ...spec, path: await resolveDataFile(spec.path, deps.baseDir, deps.env, 'source.path') };
  if (confined.type === 'csv') {
    const lean = await leanCsvPrepass(confined, deps);
    if (lean !== undefined) return { ...lean, spec: confined };
  }
  if (confined.type !== 'csv' || (confined.encoding ?? 'utf8') === 'utf8') await checkUtf8(confined, deps);
  const result: PrepassResult = { records: 0, invalid: 0, spec: confined };
  // Without `since`: the whole file must be sound, not just the part past the cursor.
  const { since: _since, until: _until, ...whole } = deps;
  try {
    for await (const item of createSource(confined, whole)) {
      result.records += 1;
      if (item.error !== undefined) result.invalid += 1;
    }
  } catch (err) {
    if (err instanceof SourceError || err instanceof ConfigError) throw err;
    throw new SourceError('SOURCE_FORMAT', `${spec.path}: ${(err as Error).message}`, { cause: err });
  }
  return result;
}
