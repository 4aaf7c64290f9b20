/**
 * Splits a backfill range `[from, to]` of cursor values into chunk jobs. Chunks are
 * half-open `(since, until]`, except the first, which is closed `[from, until]`
 * (`sinceInclusive`), so every value in `[from, to]` lies in exactly one chunk whatever
 * its precision: a microsecond timestamp or a decimal between two boundaries still falls
 * into one chunk, never between two. Boundaries are exact (BigInt arithmetic, never
 * floats), and written the way the input was, so the database compares them as it
 * compares the user's own values.
 */
import { RowbridgeError } from '../../ground/errors.ts';

/** One chunk of a backfill, ready to spread into `SourceDeps`. */
export interface RangeChunk {
  /** Lower bound: exclusive, except in the first chunk (`sinceInclusive`). */
  since: string;
  /** True only for the first chunk, whose `since` is the range's own `from`. */
  sinceInclusive: boolean;
  /** Inclusive upper bound; the last chunk's is the range's own `to`. */
  until: string;
}

/** A backfill range or chunk count the user gave cannot be split; the message names the option. */
export class BackfillRangeError extends RowbridgeError {
  override readonly name = 'BackfillRangeError';
  override readonly code = 'BACKFILL_RANGE_INVALID';
  override readonly category = 'config';
}

/** Most chunk jobs one backfill may enqueue. */
export const MAX_CHUNKS = 1000;

type Parsed =
  | { kind: 'number'; digits: bigint; scale: number }
  | { kind: 'date'; day: bigint }
  | { kind: 'timestamp'; seconds: bigint; fraction: string; shape: TimestampShape }
  | { kind: 'text' };

interface TimestampShape {
  separator: string;
  hasSeconds: boolean;
  /** As written: '' (no zone), 'Z', '+02', '+0200' or '+02:00'. */
  zone: string;
  offsetMinutes: number;
}

// Leading zeros ("007") are left as text: a zero-padded key is most likely compared as text.
const NUMBER = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})([T ])(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/;
const DAY_MS = 86_400_000;
const KIND_NAMES = {
  number: 'a number',
  date: 'a date (YYYY-MM-DD)',
  timestamp: 'a timestamp',
  text: 'text',
} as const;

/** Milliseconds of a UTC calendar time, or undefined when a part is out of range (Feb 30). */
function utcMs(parts: number[]): number | undefined {
  const [y = 0, mo = 1, d = 1, h = 0, mi = 0, s = 0] = parts;
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(ms);
  const same =
    back.getUTCFullYear() === y &&
    back.getUTCMonth() === mo - 1 &&
    back.getUTCDate() === d &&
    back.getUTCHours() === h &&
    back.getUTCMinutes() === mi &&
    back.getUTCSeconds() === s;
  return same ? ms : undefined;
}

function parseZone(zone: string): number | undefined {
  if (zone === '' || zone === 'Z') return 0;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2) || '0');
  if (hours > 23 || minutes > 59) return undefined;
  return (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
}

function parse(value: string, option: string): Parsed {
  if (value.trim() === '')
    throw new BackfillRangeError(
      `${option} is empty; give the cursor value the backfill ${option === '--from' ? 'starts' : 'ends'} at`,
    );
  const n = NUMBER.exec(value);
  if (n !== null) {
    const fraction = n[3] ?? '';
    return { kind: 'number', digits: BigInt(`${n[1]}${n[2]}${fraction}`), scale: fraction.length };
  }
  const invalid = (): BackfillRangeError =>
    new BackfillRangeError(`${option} ${value} is not a valid calendar date/time`);
  const d = DATE.exec(value);
  if (d !== null) {
    const ms = utcMs(d.slice(1, 4).map(Number));
    if (ms === undefined) throw invalid();
    return { kind: 'date', day: BigInt(ms / DAY_MS) };
  }
  const t = TIMESTAMP.exec(value);
  if (t === null) return { kind: 'text' };
  const [, y, mo, day, separator = 'T', h, mi, s, fraction = '', zone = ''] = t;
  const ms = utcMs([y, mo, day, h, mi, s ?? '0'].map(Number));
  const offsetMinutes = parseZone(zone);
  if (ms === undefined || offsetMinutes === undefined) throw invalid();
  const seconds = BigInt(ms / 1000 - offsetMinutes * 60);
  return {
    kind: 'timestamp',
    seconds,
    fraction,
    shape: { separator, hasSeconds: s !== undefined, zone, offsetMinutes },
  };
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/**
 * Upper bounds of `k` chunks over `[first, last]`. Discrete values (integers, days):
 * `last - first + 1` values, at most one chunk per value. Continuous values: boundaries
 * at whole steps strictly above `first`, at most one chunk per step.
 */
function boundaries(first: bigint, last: bigint, chunks: number, discrete: boolean): bigint[] {
  const span = discrete ? last - first + 1n : last - first;
  if (span === 0n) return [last];
  const k = BigInt(chunks) < span ? BigInt(chunks) : span;
  const out: bigint[] = [];
  for (let i = 1n; i <= k; i++) out.push(first + (i * span) / k - (discrete ? 1n : 0n));
  return out;
}

function formatDecimal(digits: bigint, scale: number): string {
  const negative = digits < 0n;
  const text = (negative ? -digits : digits).toString().padStart(scale + 1, '0');
  const whole = scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`;
  return negative ? `-${whole}` : whole;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

function formatTimestamp(units: bigint, precision: number, shape: TimestampShape): string {
  const perSecond = 10n ** BigInt(precision);
  const seconds = floorDiv(units, perSecond);
  const local = new Date(Number(seconds + BigInt(shape.offsetMinutes * 60)) * 1000);
  const date = `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}`;
  let time = `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}`;
  if (shape.hasSeconds || precision > 0) time += `:${pad(local.getUTCSeconds())}`;
  if (precision > 0) time += `.${(units - seconds * perSecond).toString().padStart(precision, '0')}`;
  return `${date}${shape.separator}${time}${formatZone(shape)}`;
}

function formatZone(shape: TimestampShape): string {
  if (shape.zone === '' || shape.zone === 'Z') return shape.zone;
  const abs = Math.abs(shape.offsetMinutes);
  const [h, m] = [pad(Math.floor(abs / 60)), pad(abs % 60)];
  const sign = shape.offsetMinutes < 0 ? '-' : '+';
  return shape.zone.length === 3
    ? `${sign}${h}`
    : shape.zone.includes(':')
      ? `${sign}${h}:${m}`
      : `${sign}${h}${m}`;
}

/** Upper bounds as text; the last one is always `to` exactly as given. */
function splitParsed(a: Parsed, b: Parsed, chunks: number): string[] | undefined {
  if (a.kind === 'number' && b.kind === 'number') {
    const scale = Math.max(a.scale, b.scale);
    const scaled = (p: typeof a): bigint => p.digits * 10n ** BigInt(scale - p.scale);
    if (scaled(a) > scaled(b)) return undefined;
    return boundaries(scaled(a), scaled(b), chunks, scale === 0).map((u) => formatDecimal(u, scale));
  }
  if (a.kind === 'date' && b.kind === 'date') {
    if (a.day > b.day) return undefined;
    return boundaries(a.day, b.day, chunks, true).map((day) =>
      new Date(Number(day) * DAY_MS).toISOString().slice(0, 10),
    );
  }
  if (a.kind === 'timestamp' && b.kind === 'timestamp') {
    const precision = Math.max(a.fraction.length, b.fraction.length);
    const units = (p: typeof a): bigint =>
      p.seconds * 10n ** BigInt(precision) + BigInt(p.fraction.padEnd(precision, '0') || '0');
    const [first, last] = [units(a), units(b)];
    if (first > last) return undefined;
    const shape = { ...a.shape, hasSeconds: a.shape.hasSeconds || b.shape.hasSeconds };
    // Minute-precision input ("2024-01-01T10:00") keeps whole-minute boundaries.
    const step = shape.hasSeconds ? 1n : 60n;
    return boundaries(first / step, last / step, chunks, false).map((u) =>
      formatTimestamp(u * step, precision, shape),
    );
  }
  return [];
}

/**
 * Splits the backfill range `[from, to]` (both inclusive) into at most `chunks` chunks.
 * Integers and dates split on whole values, decimals on their own decimal places,
 * timestamps by time at the inputs' precision (formatted like `from`); text cannot be
 * divided and is one chunk. Fewer chunks come back when the range holds fewer values
 * (integers 1..3 into 10 chunks: 3 chunks). Throws `BackfillRangeError` naming
 * `--from`/`--to` when a value is empty or not a real date, the two are of different
 * kinds, `from` is after `to`, or `chunks` is not a whole number from 1 to 1000.
 */
export function splitRange(from: string, to: string, chunks: number): RangeChunk[] {
  if (!Number.isInteger(chunks) || chunks < 1 || chunks > MAX_CHUNKS) {
    throw new BackfillRangeError(
      `chunks must be a whole number from 1 to ${MAX_CHUNKS}, got ${String(chunks)}`,
    );
  }
  const a = parse(from, '--from');
  const b = parse(to, '--to');
  if (a.kind !== b.kind) {
    throw new BackfillRangeError(
      `--from ${from} is ${KIND_NAMES[a.kind]} but --to ${to} is ${KIND_NAMES[b.kind]}; both ends of a range must be the same kind of value`,
    );
  }
  if (a.kind === 'timestamp' && b.kind === 'timestamp' && (a.shape.zone === '') !== (b.shape.zone === '')) {
    throw new BackfillRangeError(
      `--from ${from} and --to ${to}: give a time zone on both timestamps or on neither`,
    );
  }
  const uppers = splitParsed(a, b, chunks);
  // Text is ordered by code points here; a database collation may differ, but a reversed
  // range is almost always a swapped pair of options.
  if (uppers === undefined || (a.kind === 'text' && from > to)) {
    throw new BackfillRangeError(
      `--from ${from} is after --to ${to}; a backfill range runs from the lower cursor value to the higher`,
    );
  }
  if (uppers.length === 0) return [{ since: from, sinceInclusive: true, until: to }];
  uppers[uppers.length - 1] = to;
  return uppers.map((until, i) => ({
    since: i === 0 ? from : (uppers[i - 1] ?? from),
    sinceInclusive: i === 0,
    until,
  }));
}
