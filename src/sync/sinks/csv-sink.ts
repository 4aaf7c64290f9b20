/**
 * CSV sink: records as CSV rows (RFC 4180 quoting, LF line ends, UTF-8 without BOM). The
 * header is the first record's keys; when a run keeps an existing file's rows (merge,
 * append) that file's header is read and kept, so the file stays consistent. A record
 * with a key the header lacks is rejected rather than silently losing that value. How a
 * run meets the existing file (replace, merge by key, append) is file-sink.ts's part.
 */
import { createSource } from '../sources/create-source.ts';
import { resolveJobPath } from '../sources/file-input.ts';
import { stat } from 'node:fs/promises';
import { createFileSink, type FileRowCodec } from './file-sink.ts';
import { locateSinkFile } from './sink-file.ts';
import type { CsvSinkSpec, Sink, SinkDeps } from './sink-spec.ts';
import { SinkError } from './sink-error.ts';
import { sinkKey, sinkWriteMode } from './sink-mode.ts';

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

/** A cell's text as the file holds it, before quoting. */
function csvCell(value: unknown, formulaEscape: boolean): string {
  const raw = cellText(value);
  return formulaEscape && typeof value !== 'number' && typeof value !== 'bigint' && FORMULA_START.test(raw)
    ? `'${raw}`
    : raw;
}

/**
 * One CSV line (with its line end). With `formulaEscape`, text that a spreadsheet would
 * read as a formula gets a leading `'`; numbers, booleans and dates cannot be formulas.
 */
export function formatCsvLine(values: readonly unknown[], delimiter: string, formulaEscape = false): string {
  const cells = values.map((value) => {
    const text = csvCell(value, formulaEscape);
    const special =
      text.includes('"') || text.includes('\n') || text.includes('\r') || text.includes(delimiter);
    return special ? `"${text.replaceAll('"', '""')}"` : text;
  });
  // A lone empty cell would make a blank line, which readers skip: quote it to keep the row.
  if (cells.length === 1 && cells[0] === '') return '""\n';
  return `${cells.join(delimiter)}\n`;
}

/** The rows of a CSV file as read back (every value a string, header included first). */
function readRows(file: string, delimiter: string): AsyncIterable<{ data: Record<string, unknown> }> {
  return createSource({ type: 'csv', path: file, delimiter, header: false }, { env: {}, baseDir: '/' });
}

async function existingHeader(file: string, delimiter: string): Promise<string[] | undefined> {
  const info = await stat(file).catch(() => undefined);
  if (info === undefined || info.size === 0) return undefined;
  for await (const item of readRows(file, delimiter)) return Object.values(item.data).map(String);
  return undefined;
}

/** Creates a CSV sink for `spec.path`. */
export function createCsvSink(spec: CsvSinkSpec, deps: SinkDeps): Sink {
  const file = resolveJobPath(spec.path, deps.baseDir);
  const delimiter = spec.delimiter ?? ',';
  const formulaEscape = spec.formulaEscape !== false;
  let columns: string[] = [];

  const codec: FileRowCodec = {
    async start(previous, first) {
      const header = previous === undefined ? undefined : await existingHeader(previous, delimiter);
      columns = header ?? Object.keys(first);
      return header !== undefined;
    },
    preamble: () => (columns.length === 0 ? '' : formatCsvLine(columns, delimiter)),
    format(records, firstRow) {
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
          `${file}: row(s) ${bad.map((i) => firstRow + i).join(', ')} of this run have columns not in the CSV header (${[...extra].join(', ')}); the header is: ${columns.join(', ')}`,
          bad,
        );
      }
      let text = '';
      for (const record of records)
        text += formatCsvLine(
          columns.map((column) => record[column]),
          delimiter,
          formulaEscape,
        );
      return text;
    },
    cell: (value) => csvCell(value, formulaEscape),
    async *rows(path) {
      let header: string[] | undefined;
      for await (const item of readRows(path, delimiter)) {
        const cells = Object.values(item.data).map(String);
        if (header === undefined) {
          header = cells;
          continue;
        }
        const record = Object.fromEntries(header.map((name, i) => [name, cells[i] ?? '']));
        // Cells are re-written as read: they were escaped when first written.
        yield {
          record,
          text: formatCsvLine(
            columns.map((column) => record[column] ?? ''),
            delimiter,
          ),
        };
      }
    },
  };
  return createFileSink(codec, {
    shown: file,
    locate: locateSinkFile(spec.path, deps),
    write: sinkWriteMode(spec.key, deps),
    key: sinkKey(spec.key, deps),
  });
}
