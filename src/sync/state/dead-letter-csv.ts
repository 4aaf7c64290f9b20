/**
 * Dead letters as a spreadsheet a person can fix: one row per entry with the record as
 * it came from the source, plus reason columns (named with a leading `_dlq_`, so they
 * cannot clash with a source column). Cells are safe to open: a value a spreadsheet
 * would run as a formula (`=`, `+`, `-`, `@`, tab or CR first) gets a leading `'`, which
 * reading the file back removes again.
 */
import { parse } from 'csv-parse/sync';
import type { DeadLetterEntry } from './dead-letter-entry.ts';
import { detectCsvDelimiter } from '../sources/csv-delimiter.ts';
import { positionLabel } from './dead-letter-format.ts';

export const DLQ_COLUMNS = [
  '_dlq_id',
  '_dlq_job',
  '_dlq_category',
  '_dlq_code',
  '_dlq_field',
  '_dlq_position',
  '_dlq_reason',
] as const;

const FORMULA_START = /^[=+\-@\t\r]/;

/** A cell a spreadsheet shows as text. */
export function formulaSafe(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

function unescapeCell(text: string): string {
  return text.startsWith("'") && FORMULA_START.test(text.slice(1)) ? text.slice(1) : text;
}

function cellText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return JSON.stringify(value);
}

function quote(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The CSV of `entries`: reason columns first, then every source column in first-seen order. */
export function deadLettersToCsv(entries: readonly DeadLetterEntry[]): string {
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    for (const key of Object.keys(entry.source.data)) {
      if (!seen.has(key)) {
        seen.add(key);
        columns.push(key);
      }
    }
  }
  const lines = [[...DLQ_COLUMNS, ...columns].map((c) => quote(formulaSafe(c))).join(',')];
  for (const entry of entries) {
    const reason = [
      entry.id,
      entry.job,
      entry.category,
      cellText(entry.errorCode),
      entry.field ?? '',
      positionLabel(entry.source.position),
      entry.message,
    ];
    const data = columns.map((c) => cellText(entry.source.data[c]));
    lines.push([...reason, ...data].map((t) => quote(formulaSafe(t))).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** One fixed row of a CSV read back: the entry it fixes and the record's new values. */
export interface FixedRow {
  id: string;
  line: number;
  data: Record<string, string>;
}

/**
 * Reads a CSV written by {@link deadLettersToCsv} and fixed by a person: every row needs
 * its `_dlq_id`; the `_dlq_*` columns are dropped, the others are the record's values.
 * @throws Error naming the file and the line of the first row without an id.
 */
export function readFixedCsv(text: string, file: string): FixedRow[] {
  // A spreadsheet saves the file with its own delimiter: German Excel writes `;`.
  const records = parse<{ record: Record<string, string>; info: { lines: number } }>(text, {
    delimiter: detectCsvDelimiter(text),
    columns: true,
    bom: true,
    skip_empty_lines: true,
    info: true,
  });
  const out: FixedRow[] = [];
  for (const { record, info } of records) {
    const id = unescapeCell(record._dlq_id ?? '').trim();
    if (id === '')
      throw new Error(
        `${file} line ${info.lines}: no _dlq_id: each row must keep the id column of the export`,
      );
    const data: Record<string, string> = {};
    for (const [key, value] of Object.entries(record)) {
      if (!key.startsWith('_dlq_')) data[unescapeCell(key)] = unescapeCell(value);
    }
    out.push({ id, line: info.lines, data });
  }
  return out;
}
