import { describe, expect, it } from 'vitest';
import {
  createTimestampParser,
  parsePlatformTimestamp,
} from '../../../../src/api/rows/parse-platform-timestamp.ts';
import { RowShapeError } from '../../../../src/api/rows/row-errors.ts';
import { ConfigError } from '../../../../src/ground/errors.ts';

describe('parsePlatformTimestamp', () => {
  it("reads the spec's ISO 8601 UTC form with milliseconds", () => {
    expect(parsePlatformTimestamp('2024-03-25T07:52:58.123Z').toISOString()).toBe('2024-03-25T07:52:58.123Z');
    expect(parsePlatformTimestamp('2024-03-25T07:52:58Z').toISOString()).toBe('2024-03-25T07:52:58.000Z');
  });

  it('ignores the time zone option for timestamps that carry a zone', () => {
    expect(parsePlatformTimestamp('2024-03-25T07:52:58.123Z', 'Asia/Shanghai').toISOString()).toBe(
      '2024-03-25T07:52:58.123Z',
    );
    expect(parsePlatformTimestamp('2024-03-25T15:52:58.000+08:00', 'Europe/Berlin').toISOString()).toBe(
      '2024-03-25T07:52:58.000Z',
    );
    expect(parsePlatformTimestamp('2024-03-25T02:52:58-0500').toISOString()).toBe('2024-03-25T07:52:58.000Z');
  });

  it('reads the zone-less form as UTC by default', () => {
    expect(parsePlatformTimestamp('2024-03-25 15:52:58').toISOString()).toBe('2024-03-25T15:52:58.000Z');
    expect(parsePlatformTimestamp('2024-03-25 15:52').toISOString()).toBe('2024-03-25T15:52:00.000Z');
  });

  it('reads the zone-less form in the organisation time zone', () => {
    expect(parsePlatformTimestamp('2024-03-25 15:52:58', 'Asia/Shanghai').toISOString()).toBe(
      '2024-03-25T07:52:58.000Z',
    );
    expect(parsePlatformTimestamp('2024-01-15 12:00:00', 'America/New_York').toISOString()).toBe(
      '2024-01-15T17:00:00.000Z',
    );
    // Summer time: New York is UTC-4 in July.
    expect(parsePlatformTimestamp('2024-07-15 12:00:00', 'America/New_York').toISOString()).toBe(
      '2024-07-15T16:00:00.000Z',
    );
  });

  it('uses the offset in force on each side of a DST change', () => {
    const berlin = createTimestampParser('Europe/Berlin');
    // Summer time begins 2024-03-31 02:00 local (01:00 UTC).
    expect(berlin('2024-03-31 01:59:59').toISOString()).toBe('2024-03-31T00:59:59.000Z');
    expect(berlin('2024-03-31 03:00:00').toISOString()).toBe('2024-03-31T01:00:00.000Z');
    // And ends 2024-10-27 03:00 local (01:00 UTC).
    expect(berlin('2024-10-27 04:00:00').toISOString()).toBe('2024-10-27T03:00:00.000Z');
    expect(berlin('2024-10-26 23:30:00.250').toISOString()).toBe('2024-10-26T21:30:00.250Z');
  });

  it('refuses values that are not platform timestamps, saying what is accepted', () => {
    for (const bad of [
      '25/03/2024 15:52',
      '2024-03-25',
      'yesterday',
      '2024-02-30 10:00:00',
      '2024-03-25 25:00:00',
    ]) {
      expect(() => parsePlatformTimestamp(bad), bad).toThrow(RowShapeError);
      expect(() => parsePlatformTimestamp(bad), bad).toThrow(
        '"YYYY-MM-DD HH:mm:ss" in the organisation time zone',
      );
    }
    expect(() => parsePlatformTimestamp(1711353178000)).toThrow('a number is not a platform timestamp');
    expect(() => parsePlatformTimestamp('2024-03-25T07:52:58+25:00')).toThrow('impossible zone offset');
  });

  it('refuses an unknown time zone at once, as a config error', () => {
    expect(() => createTimestampParser('Mars/Olympus')).toThrow(ConfigError);
    expect(() => createTimestampParser('Mars/Olympus')).toThrow(
      'timeZone "Mars/Olympus" is not an IANA time zone name (for example "UTC" or "Europe/Berlin")',
    );
  });
});
