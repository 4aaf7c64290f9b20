/**
 * Timestamps as the platform sends them (platform notes §5, [C]/[U]): the spec's ISO 8601
 * UTC with milliseconds (`2024-03-25T07:52:58.123Z`), and the public platform's
 * `2024-03-25 15:52:58`, which carries no zone and is in the organisation's time zone.
 */
import { ConfigError } from '../../ground/errors.ts';
import { createZoneClock } from '../zone-clock.ts';
import type { ZoneClock } from '../zone-clock.ts';
import { RowShapeError } from './row-errors.ts';

/** Turns one platform timestamp into a Date; throws {@link RowShapeError} on anything else. */
export type TimestampParser = (value: unknown) => Date;

const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;

const EXPECTED =
  'expected ISO 8601 with a zone (2024-03-25T07:52:58.123Z) or "YYYY-MM-DD HH:mm:ss" in the organisation time zone';

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return value === null ? 'null' : `a ${typeof value}`;
}

function createClock(timeZone: string): ZoneClock {
  try {
    return createZoneClock(timeZone);
  } catch (err) {
    throw new ConfigError(
      `timeZone "${timeZone}" is not an IANA time zone name (for example "UTC" or "Europe/Berlin")`,
      { cause: err },
    );
  }
}

/**
 * A parser for one organisation time zone. The zone is checked at once, so a wrong
 * setting fails before any row is read; its formatter is built once per parser.
 * @param timeZone IANA zone of zone-less timestamps. @defaultValue 'UTC'
 */
export function createTimestampParser(timeZone = 'UTC'): TimestampParser {
  const clock = createClock(timeZone);

  return (value) => {
    if (value instanceof Date) {
      if (Number.isNaN(value.getTime())) throw new RowShapeError(`invalid Date; ${EXPECTED}`);
      return new Date(value.getTime());
    }
    const match = typeof value === 'string' ? TIMESTAMP.exec(value.trim()) : null;
    if (match === null)
      throw new RowShapeError(`${describe(value)} is not a platform timestamp; ${EXPECTED}`);
    const [, y, mo, d, h, mi, s = '0', frac = '', zulu, sign, offH, offM] = match;
    const fields = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
    const [year, month, day, hour, minute, second] = fields;
    const ms = Number(frac.padEnd(3, '0').slice(0, 3));
    const wall = Date.UTC(year, month - 1, day, hour, minute, second, ms);
    const check = new Date(wall);
    // Date.UTC rolls 2024-02-30 over into March; a round trip catches such dates.
    if (
      check.getUTCFullYear() !== year ||
      check.getUTCMonth() !== month - 1 ||
      check.getUTCDate() !== day ||
      check.getUTCHours() !== hour ||
      check.getUTCMinutes() !== minute ||
      check.getUTCSeconds() !== second
    ) {
      throw new RowShapeError(`${describe(value)} is not a valid date and time; ${EXPECTED}`);
    }
    if (zulu !== undefined) return check;
    if (sign !== undefined) {
      if (Number(offH) > 23 || Number(offM) > 59) {
        throw new RowShapeError(`${describe(value)} has an impossible zone offset; ${EXPECTED}`);
      }
      const offset = (Number(offH) * 60 + Number(offM)) * 60_000 * (sign === '-' ? -1 : 1);
      return new Date(wall - offset);
    }
    // Wall times inside a DST gap or overlap follow the clock's "compatible" rule; the
    // platform sends nothing to decide.
    return new Date(clock.toInstant(year, month, day, hour, minute, second) + ms);
  };
}

/**
 * Parses a platform timestamp: ISO 8601 with `Z` or an offset, or
 * `YYYY-MM-DD HH:mm[:ss[.SSS]]` (also with `T`) read in `timeZone`.
 * For many values, build one parser with {@link createTimestampParser}.
 */
export function parsePlatformTimestamp(value: unknown, timeZone = 'UTC'): Date {
  return createTimestampParser(timeZone)(value);
}
