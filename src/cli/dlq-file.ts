/**
 * `dlq export` and `dlq replay --file`: dead letters out to a CSV a person fixes in a
 * spreadsheet, and the fixed rows back in, each onto the entry it came from (same id),
 * replayed under the job's current mapping.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { deadLettersToCsv, readFixedCsv } from '../sync/state/dead-letter-csv.ts';
import type { DeadLetterEntry } from '../sync/state/dead-letter-entry.ts';
import type { DeadLetterFilter, DeadLetterStore } from '../sync/state/dead-letter-store.ts';
import type { CliIo } from './io.ts';
import { EXIT } from './io.ts';

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
): Promise<string[] | undefined> {
  const full = path.resolve(io.cwd, file);
  let text: string;
  try {
    const bytes = await readFile(full);
    // Excel's "Unicode text" is UTF-16LE with a mark; everything else it saves here is read as UTF-8.
    text =
      bytes[0] === 0xff && bytes[1] === 0xfe ? bytes.subarray(2).toString('utf16le') : bytes.toString('utf8');
  } catch (err) {
    io.err(
      `dlq replay: cannot read ${full}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
    return undefined;
  }
  let rows;
  try {
    rows = readFixedCsv(text, full);
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
