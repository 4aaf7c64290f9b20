/**
 * CSV sink: appends records as CSV rows (RFC 4180 quoting, LF line ends, UTF-8 without
 * BOM). The header is the first record's keys, written once; when the file already has
 * content, its header is read and kept, so runs append to one consistent file. A record
 * with a key the header lacks is rejected rather than silently losing that value.
 */
import { createSource } from '../sources/create-source.ts';
import { resolveJobPath } from '../sources/file-input.ts';
import { stat } from 'node:fs/promises';
import { createFileAppender } from './file-appender.ts';
import { locateSinkFile } from './sink-file.ts';
import type { CsvSinkSpec, Sink, SinkDeps } from './sink-spec.ts';
import { SinkError } from './sink-error.ts';

/** The text of one cell before quoting. */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return value.toString();
  return JSON.stringify(value) ?? '';
}

const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV line (with its line end). With `formulaEscape`, text that a spreadsheet would
 * read as a formula gets a leading `'`; numbers, booleans and dates cannot be formulas.
 */
export function formatCsvLine(values: readonly unknown[], delimiter: string, formulaEscape = false): string {
  const cells = values.map((value) => {
    const raw = cellText(value);
    const text =
      formulaEscape && typeof value !== 'number' && typeof value !== 'bigint' && FORMULA_START.test(raw)
        ? `'${raw}`
        : raw;
    const special =
      text.includes('"') || text.includes('\n') || text.includes('\r') || text.includes(delimiter);
    return special ? `"${text.replaceAll('"', '""')}"` : text;
  });
  // A lone empty cell would make a blank line, which readers skip: quote it to keep the row.
  if (cells.length === 1 && cells[0] === '') return '""\n';
  return `${cells.join(delimiter)}\n`;
}

async function existingHeader(file: string, delimiter: string): Promise<string[] | undefined> {
  const info = await stat(file).catch(() => undefined);
  if (info === undefined || info.size === 0) return undefined;
  for await (const item of createSource(
    { type: 'csv', path: file, delimiter, header: false },
    { env: {}, baseDir: '/' },
  )) {
    return Object.values(item.data).map((value) => String(value));
  }
  return undefined;
}

/** Creates a CSV sink appending to `spec.path`. */
export function createCsvSink(spec: CsvSinkSpec, deps: SinkDeps): Sink {
  const file = resolveJobPath(spec.path, deps.baseDir);
  const locate = locateSinkFile(spec.path, deps);
  const delimiter = spec.delimiter ?? ',';
  const formulaEscape = spec.formulaEscape !== false;
  const out = createFileAppender(file, locate);
  let header: string[] | undefined;
  let headerLoaded = false;
  let tail: Promise<void> = Promise.resolve();

  const writeBatch = async (records: Array<Record<string, unknown>>): Promise<void> => {
    const first = records[0];
    if (first === undefined) return;
    if (!headerLoaded) {
      // The checked path: the header of a file out of the data folder is never read.
      header = await existingHeader(await locate(), delimiter);
      headerLoaded = true;
    }
    const columns = header ?? Object.keys(first);
    const known = new Set(columns);
    const bad: number[] = [];
    const extra = new Set<string>();
    records.forEach((record, i) => {
      const unknown = Object.keys(record).filter((key) => !known.has(key));
      if (unknown.length > 0) bad.push(i);
      for (const key of unknown) extra.add(key);
    });
    if (bad.length > 0) {
      throw new SinkError(
        'SINK_INVALID_RECORD',
        `${file}: record(s) ${bad.map((i) => i + 1).join(', ')} of the batch have columns not in the CSV header (${[...extra].join(', ')}); the header is: ${columns.join(', ')}`,
        bad,
      );
    }
    let text = header === undefined ? formatCsvLine(columns, delimiter) : '';
    for (const record of records)
      text += formatCsvLine(
        columns.map((column) => record[column]),
        delimiter,
        formulaEscape,
      );
    await out.append(text);
    header = columns;
  };

  return {
    write(records) {
      const next = tail.then(() => writeBatch(records));
      tail = next.catch(() => undefined);
      return next;
    },
    async close() {
      await tail;
      await out.close();
    },
  };
}
