/**
 * Dead letters as people read them: a position a user can find in the source file, a
 * table for `dlq list`, a full page for `dlq show`, and the counts by category.
 */
import { PLATFORM_ERROR_CODES } from '../../ground/errors.ts';
import type { ErrorCategory } from '../../ground/errors.ts';
import type { SourcePosition } from '../model/types.ts';
import type { DeadLetterEntry } from './dead-letter-entry.ts';

/** Width a message is clipped to in the table. */
export const MESSAGE_COLUMN = 70;

/**
 * Where the record is, in the one form every place shows it: `line 12`, the physical
 * line in a file with the header counted (the line an editor shows); `order_id 42`, a
 * SQL row's key column and value, `rowid 6f1c…` a worksheet row; else `record 12`, the
 * twelfth record the run read (index 11), as for an http source.
 */
export function positionLabel(position: SourcePosition): string {
  if (position.line !== undefined) return `line ${position.line}`;
  if (position.id !== undefined) return `${position.idColumn ?? 'id'} ${position.id}`;
  return `record ${position.index + 1}`;
}

/** One line, at most `width` characters, `…` where it was cut. */
export function clipLine(text: string, width: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= width ? line : `${line.slice(0, width - 1)}…`;
}

/** `12 dead letters: invalid-row 9, conflict 3` (or `no dead letters`). */
export function formatCounts(counts: Partial<Record<ErrorCategory, number>>): string {
  const parts = Object.entries(counts).filter(
    (pair): pair is [string, number] => pair[1] !== undefined && pair[1] > 0,
  );
  const total = parts.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) return 'no dead letters';
  const by = parts
    .sort((a, b) => b[1] - a[1])
    .map(([category, n]) => `${category} ${n}`)
    .join(', ');
  return `${total} dead letter${total === 1 ? '' : 's'}: ${by}`;
}

/** Aligned columns: id, job, category, code, field, position, message (clipped). */
export function formatDeadLetterTable(entries: readonly DeadLetterEntry[]): string {
  const header = ['ID', 'JOB', 'CATEGORY', 'CODE', 'FIELD', 'POSITION', 'MESSAGE'];
  const rows = entries.map((e) => [
    e.id,
    e.job,
    e.category,
    e.errorCode === undefined ? '-' : String(e.errorCode),
    e.field ?? '-',
    positionLabel(e.source.position),
    clipLine(e.message, MESSAGE_COLUMN),
  ]);
  const widths = header.map((h, col) => Math.max(h.length, ...rows.map((row) => (row[col] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, col) => (col === cells.length - 1 ? cell : cell.padEnd(widths[col] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** Every field of one entry, labelled, with the source record and payload as JSON. */
export function formatDeadLetter(entry: DeadLetterEntry): string {
  const { position } = entry.source;
  const where = [positionLabel(position), `record index ${position.index}`];
  if (position.page !== undefined) where.push(`page ${position.page}`);
  if (position.id !== undefined && position.line !== undefined) where.push(`source id ${position.id}`);
  const meaning = entry.errorCode === undefined ? undefined : PLATFORM_ERROR_CODES[entry.errorCode]?.meaning;
  const lines: Array<[string, string | undefined]> = [
    ['id', entry.id],
    ['job', entry.job],
    ['run', entry.runId],
    ['category', entry.category],
    [
      'code',
      entry.errorCode === undefined ? undefined : `${entry.errorCode}${meaning ? ` (${meaning})` : ''}`,
    ],
    ['field', entry.field],
    ['message', entry.message],
    ['position', where.join(', ')],
    ['attempts', String(entry.attempts)],
    ['created', entry.createdAt],
  ];
  const out = lines.filter(([, v]) => v !== undefined).map(([k, v]) => `${`${k}:`.padEnd(10)}${v}`);
  if (entry.source.cursor !== undefined)
    out.push(`${'cursor:'.padEnd(10)}${JSON.stringify(entry.source.cursor)}`);
  out.push('', 'source record:', json(entry.source.data));
  if (entry.payload !== undefined) out.push('', 'mapped payload:', json(entry.payload));
  return out.join('\n');
}
