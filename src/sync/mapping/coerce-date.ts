/**
 * Date, DateTime and Time coercion (platform notes §4: `YYYY-MM-DD`,
 * `YYYY-MM-DD HH:mm:ss`, `HH:mm:ss`).
 *
 * Time zones. The platform writes and reads zone-less wall clocks of the organisation's
 * zone (platform-shapes §3 [C] format, [U] zone; `ROWBRIDGE_PLATFORM_TIMEZONE`, the
 * plan's `targetTimezone`), so every value that carries a zone is converted to it:
 * - DateTime: a source value without an offset is a wall-clock time in the mapping's
 *   `timezone` (default UTC); a value with `Z`/`±hh:mm`, a JS Date or an epoch number is
 *   an instant. The instant is written as the organisation's wall clock.
 * - Date: a zone-less string is a calendar date and keeps the date it spells (a time
 *   part is ignored). A value with `Z`/`±hh:mm`, a JS Date or an epoch is an instant,
 *   written as the organisation's date of that instant. (Database `date` and
 *   `timestamp` columns arrive as zone-less text, see the SQL sources.)
 * - Time: a bare time of day is written as spelt (without a date, DST makes a zone
 *   conversion undefined). A full date-time (with an offset, or zone-less in the
 *   mapping's `timezone`) is converted and written as the organisation's time of day.
 *   Always `HH:mm:ss` (platform-shapes §7 [L]; row-create.json writes `"09:30:00"` to a
 *   subType 1 field), but a subType 1 field holds minutes (§4: 1 HH:mm, 6 HH:mm:ss) and
 *   reads back `HH:mm`, so its seconds are dropped: `09:30:15` written would read
 *   `09:30` and every later run would see a change.
 */
import dayjs from 'dayjs';
import customParseFormat from 'dayjs/plugin/customParseFormat.js';
import utc from 'dayjs/plugin/utc.js';
import { CoerceFailure, type Coercer, kindOf } from './coerce-result.ts';
import { compileFormat, isValidWall, type WallParts } from './compile-format.ts';
import type { ZoneClock } from '../../api/zone-clock.ts';

// Plugins register on the dayjs singleton once at load; this is dayjs's own setup,
// idempotent, not state of ours.
dayjs.extend(customParseFormat);
dayjs.extend(utc);

export type TemporalType = 'Date' | 'DateTime' | 'Time';

export interface DateCoercerOptions {
  /** dayjs parse tokens; `x`/`X` mean epoch milliseconds/seconds. Absent: ISO 8601. */
  format?: string | undefined;
  source: ZoneClock;
  target: ZoneClock;
  /** The field's subType; a Time field with 1 keeps minutes only (platform-shapes §4). */
  subType?: number | undefined;
}

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const CLOCK = /^(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?$/;
const EPOCH = /^-?\d+(?:\.\d+)?$/;

const ISO_HINT =
  'expected ISO 8601 (YYYY-MM-DD, YYYY-MM-DDTHH:mm:ss, optional Z or ±hh:mm); set `format` for other layouts';

/** A problem with a `format` for a temporal field, or undefined when usable. */
export function checkTemporalFormat(format: string): string | undefined {
  if (format === 'x' || format === 'X') return undefined;
  const tokens = format.replace(/\[[^\]]*\]/g, '');
  if (/Z/.test(tokens)) {
    return `format "${format}" has an offset token (Z); offsets are read from ISO 8601 values without a format, or set \`timezone\``;
  }
  const sample = dayjs.utc('2031-11-28T21:47:53.123Z').format(format);
  if (!dayjs.utc(sample, format, true).isValid()) {
    return `format "${format}" cannot be parsed strictly (dayjs tokens such as DD/MM/YYYY HH:mm:ss)`;
  }
  return undefined;
}

/** Builds the coercer for one Date/DateTime/Time field; everything format-related is settled here once. */
export function createDateCoercer(type: TemporalType, options: DateCoercerOptions): Coercer {
  const { format, source, target } = options;
  const epochUnit = format === 'x' ? 1 : format === 'X' ? 1000 : 0;
  const custom = format !== undefined && epochUnit === 0 ? format : undefined;
  const compiled = custom === undefined ? undefined : compileFormat(custom);
  const numberHint = 'a number is not a date; set format "x" (epoch milliseconds) or "X" (epoch seconds)';

  // Returns an instant (number), a wall clock, or a failure.
  function parse(raw: unknown): number | WallParts | CoerceFailure {
    if (raw instanceof Date) {
      const t = raw.getTime();
      return Number.isNaN(t) ? new CoerceFailure('invalid Date object') : t;
    }
    if (typeof raw === 'number' || typeof raw === 'bigint') {
      const n = Number(raw);
      if (epochUnit === 0 || !Number.isFinite(n)) return new CoerceFailure(numberHint);
      return n * epochUnit;
    }
    if (typeof raw !== 'string') return new CoerceFailure(`expected a date string, got ${kindOf(raw)}`);
    const text = raw.trim();
    if (epochUnit !== 0) {
      if (!EPOCH.test(text))
        return new CoerceFailure(
          `expected epoch ${epochUnit === 1 ? 'milliseconds' : 'seconds'} (format "${format}")`,
        );
      return Number(text) * epochUnit;
    }
    if (custom !== undefined) {
      const wall = compiled === undefined ? parseWithDayjs(text, custom) : compiled(text);
      return wall ?? new CoerceFailure(`not a valid date in format "${custom}"`);
    }
    const m = ISO.exec(text);
    if (m === null) return new CoerceFailure(`not a date: ${ISO_HINT}`);
    const wall: WallParts = {
      y: Number(m[1]),
      mo: Number(m[2]),
      d: Number(m[3]),
      h: m[4] === undefined ? 0 : Number(m[4]),
      mi: m[5] === undefined ? 0 : Number(m[5]),
      s: m[6] === undefined ? 0 : Number(m[6]),
    };
    if (!isValidWall(wall)) return new CoerceFailure(`no such date or time: ${ISO_HINT}`);
    const zone = m[7];
    if (zone === undefined) return wall;
    return Date.UTC(wall.y, wall.mo - 1, wall.d, wall.h, wall.mi, wall.s) - offsetMs(zone);
  }

  if (type === 'Time') {
    const minutes = options.subType === 1;
    const clock = (h: number, mi: number, s: number): string =>
      `${pad2(h)}:${pad2(mi)}:${minutes ? '00' : pad2(s)}`;
    return (raw) => {
      if (typeof raw !== 'string')
        return new CoerceFailure(`expected a time of day (HH:mm or HH:mm:ss), got ${kindOf(raw)}`);
      const text = raw.trim();
      if (custom !== undefined) {
        const wall = compiled === undefined ? parseWithDayjs(text, custom) : compiled(text);
        if (wall === undefined) return new CoerceFailure(`not a valid time in format "${custom}"`);
        return clock(wall.h, wall.mi, wall.s);
      }
      const m = CLOCK.exec(text);
      if (m === null && ISO.test(text)) {
        const p = parse(text);
        if (p instanceof CoerceFailure) return p;
        const instant = typeof p === 'number' ? p : source.toInstant(p.y, p.mo, p.d, p.h, p.mi, p.s);
        if (!Number.isFinite(instant)) return new CoerceFailure('date out of range');
        const time = target.formatDateTime(instant).slice(11);
        return minutes ? `${time.slice(0, 5)}:00` : time;
      }
      const h = Number(m?.[1]);
      const mi = Number(m?.[2]);
      const s = m?.[3] === undefined ? 0 : Number(m[3]);
      if (m === null || h > 23 || mi > 59 || s > 59) {
        return new CoerceFailure(
          'not a time of day: expected HH:mm or HH:mm:ss (00:00 to 23:59:59); set `format` for other layouts',
        );
      }
      return clock(h, mi, s);
    };
  }

  if (type === 'Date') {
    return (raw) => {
      const p = parse(raw);
      if (p instanceof CoerceFailure) return p;
      if (typeof p === 'number') return target.formatDate(p);
      return `${pad4(p.y)}-${pad2(p.mo)}-${pad2(p.d)}`;
    };
  }

  return (raw) => {
    const p = parse(raw);
    if (p instanceof CoerceFailure) return p;
    const instant = typeof p === 'number' ? p : source.toInstant(p.y, p.mo, p.d, p.h, p.mi, p.s);
    if (!Number.isFinite(instant)) return new CoerceFailure('date out of range');
    return target.formatDateTime(instant);
  };
}

function parseWithDayjs(text: string, format: string): WallParts | undefined {
  const d = dayjs.utc(text, format, true);
  if (!d.isValid()) return undefined;
  return { y: d.year(), mo: d.month() + 1, d: d.date(), h: d.hour(), mi: d.minute(), s: d.second() };
}

function offsetMs(zone: string): number {
  if (zone === 'Z' || zone === 'z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  return sign * (hours * 60 + minutes) * 60_000;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

function pad4(n: number): string {
  return String(n).padStart(4, '0');
}
