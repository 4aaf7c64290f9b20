/**
 * Write formats of the date and time fields (platform notes §4): Date, DateTime, Time and
 * DateRange values are checked as calendar dates and clock times, not just patterns, and
 * turned into the canonical strings the store keeps. Apart from value-codec.ts because
 * this calendar checking is the one part of the write formats that needs no write scope.
 */
import { valueError } from '../emulator-error.ts';
import { describe } from '../input.ts';
import type { FieldRecord } from '../state/records.ts';
import { fieldLabel } from './field-label.ts';

/** The field types whose written values are dates or times. */
export type DateTimeKind = 'Date' | 'DateTime' | 'Time' | 'DateRange';

function validDate(y: number, m: number, d: number): boolean {
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2})(?::(\d{2}))?)?$/;
const TIME = /^(\d{2}):(\d{2})(?::(\d{2}))?$/;

function parseDateTime(value: unknown): { date: string; time: string | undefined } | undefined {
  if (typeof value !== 'string') return undefined;
  const m = DATE_TIME.exec(value.trim());
  if (m === null || !validDate(Number(m[1]), Number(m[2]), Number(m[3]))) return undefined;
  const date = `${m[1]}-${m[2]}-${m[3]}`;
  if (m[4] === undefined) return { date, time: undefined };
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59) return undefined;
  return { date, time: `${m[4]}:${m[5]}:${m[6] ?? '00'}` };
}

/** The canonical form of a written date or time value (never empty: value-codec clears those). */
export function canonicalDateTime(field: FieldRecord, kind: DateTimeKind, value: unknown): string | string[] {
  switch (kind) {
    case 'Date': {
      const parsed = parseDateTime(value);
      if (parsed === undefined)
        throw valueError(`${fieldLabel(field)} expects a date YYYY-MM-DD, got ${describe(value)}`);
      return parsed.date;
    }
    case 'DateTime': {
      const parsed = parseDateTime(value);
      if (parsed === undefined)
        throw valueError(
          `${fieldLabel(field)} expects a date-time YYYY-MM-DD HH:mm:ss, got ${describe(value)}`,
        );
      const canonical = `${parsed.date} ${parsed.time ?? '00:00:00'}`;
      // Keep the caller's string when it is already canonical: one string per row, not three.
      return value === canonical ? value : canonical;
    }
    case 'Time': {
      const m = typeof value === 'string' ? TIME.exec(value.trim()) : null;
      if (m === null || Number(m[1]) > 23 || Number(m[2]) > 59 || Number(m[3] ?? 0) > 59) {
        throw valueError(`${fieldLabel(field)} expects a time HH:mm:ss, got ${describe(value)}`);
      }
      return `${m[1]}:${m[2]}:${m[3] ?? '00'}`;
    }
    case 'DateRange': {
      const range = Array.isArray(value) && value.length === 2 ? value.map(parseDateTime) : undefined;
      if (range?.[0] === undefined || range[1] === undefined)
        throw valueError(`${fieldLabel(field)} expects ["YYYY-MM-DD", "YYYY-MM-DD"], got ${describe(value)}`);
      return [range[0].date, range[1].date];
    }
  }
}
