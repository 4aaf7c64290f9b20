/**
 * `dlq export` and `dlq replay --file`: dead letters out to a CSV a person fixes in a
 * spreadsheet, and the fixed rows back in, each onto the entry it came from (same id),
 * replayed under the job's current mapping.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { firstInvalidUtf8Line } from '../sync/read/file-prepass.ts';
import { createCsvDecoder } from '../sync/sources/csv-decoder.ts';
import type { CsvEncoding } from '../sync/sources/source-spec.ts';
import { deadLettersToCsv, readFixedCsv } from '../sync/state/dead-letter-csv.ts';
import type { DeadLetterEntry } from '../sync/state/dead-letter-entry.ts';
import type { DeadLetterFilter, DeadLetterStore } from '../sync/state/dead-letter-store.ts';
import { UsageError } from './args.ts';
import type { CliIo } from './io.ts';
import { EXIT } from './io.ts';

const ENCODINGS: readonly CsvEncoding[] = ['utf8', 'gbk', 'gb18030', 'utf16le', 'latin1'];

/** The `--encoding` of `dlq replay --file`, checked: the values `source.encoding` takes. */
export function fixedFileEncoding(given: string | undefined): CsvEncoding | undefined {
  if (given === undefined) return undefined;
  const found = ENCODINGS.find((e) => e === given.toLowerCase());
  if (found === undefined)
    throw new UsageError(`--encoding "${given}" is not one of ${ENCODINGS.join(', ')} (as source.encoding)`);
  return found;
}

/**
 * The text of a fixed export as the csv source reads a file of `encoding` (UTF-8 when
 * none is given): a UTF-8 or UTF-16 mark wins, as it does there. Bytes that are not
 * UTF-8 are refused, naming their line: read as UTF-8 a GBK file (what Chinese Excel
 * saves) would replay every Chinese cell as U+FFFD.
 */
function decodeFixedFile(bytes: Buffer, given: CsvEncoding | undefined, file: string): string {
  const utf16Mark = bytes[0] === 0xff && bytes[1] === 0xfe;
  const utf8Mark = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  const encoding = utf16Mark ? 'utf16le' : utf8Mark ? 'utf8' : (given ?? 'utf8');
  if (encoding === 'latin1') return bytes.toString('latin1');
  if (encoding !== 'utf8') {
    const decoder = createCsvDecoder(encoding, false);
    return (decoder.decode(bytes) ?? '') + (decoder.end() ?? '');
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new Error(
      `${file} line ${firstInvalidUtf8Line(bytes) ?? 1}: not valid UTF-8; save the file as UTF-8, or give --encoding gbk (Chinese Excel's CSV), utf16le or latin1`,
    );
  }
}

/** Writes the matching dead letters as CSV to `out` (stdout when undefined); resolves to the exit code. */
export async function exportDeadLetters(
  store: DeadLetterStore,
  filter: DeadLetterFilter,
  out: string | undefined,
  io: CliIo,
): Promise<number> {
  const entries: DeadLetterEntry[] = [];
  for await (const entry of store.iterate(filter)) entries.push(entry);
  const csv = deadLettersToCsv(entries);
  if (out === undefined) {
    io.out(csv.trimEnd());
    return EXIT.ok;
  }
  const file = path.resolve(io.cwd, out);
  await writeFile(file, csv);
  io.err(
    `wrote ${entries.length} dead letter${entries.length === 1 ? '' : 's'} to ${file}: fix the rows, keep the _dlq_id column, then: rowbridge dlq replay --file ${out}`,
  );
  return EXIT.ok;
}

/**
 * Puts the fixed records of `file` onto their entries and returns their ids for the
 * replay. Ids the store no longer has (replayed or purged since the export) are named
 * and skipped; a row without an id fails the whole file before anything changes.
 */
export async function applyFixedFile(
  store: DeadLetterStore,
  file: string,
  io: CliIo,
  encoding?: CsvEncoding,
): Promise<string[] | undefined> {
  const full = path.resolve(io.cwd, file);
  let bytes: Buffer;
  try {
    bytes = await readFile(full);
  } catch (err) {
    io.err(
      `dlq replay: cannot read ${full}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
    return undefined;
  }
  let rows;
  try {
    rows = readFixedCsv(decodeFixedFile(bytes, encoding, full), full);
  } catch (err) {
    io.err(`dlq replay: ${(err as Error).message}`);
    return undefined;
  }
  const known: typeof rows = [];
  for (const row of rows) {
    if ((await store.get(row.id)) === undefined)
      io.err(
        `dlq replay: ${full} line ${row.line}: no dead letter ${row.id} (replayed or purged since the export): skipped`,
      );
    else known.push(row);
  }
  await store.replaceSource(known.map((row) => ({ id: row.id, data: row.data })));
  return known.map((row) => row.id);
}
