import { describe, expect, it } from 'vitest';
import type { WorksheetField } from '../../../../src/api/types.ts';
import { mapRecord } from '../../../../src/sync/mapping/map-record.ts';
import type { MapResult } from '../../../../src/sync/mapping/map-result.ts';
import { validateMapping } from '../../../../src/sync/mapping/validate-mapping.ts';
import { createZoneClock } from '../../../../src/api/zone-clock.ts';
import type { FieldMapping } from '../../../../src/sync/model/types.ts';

const date: WorksheetField = { id: 'f_date', name: 'Born', alias: 'born', type: 'Date' };
const dateTime: WorksheetField = { id: 'f_dt', name: 'Seen at', alias: 'seen_at', type: '16' };
const time: WorksheetField = { id: 'f_time', name: 'Opens', alias: 'opens', type: 'Time' };

function mapOne(
  field: WorksheetField,
  raw: unknown,
  mapping: Partial<FieldMapping> = {},
  targetTimezone?: string,
): MapResult {
  const plan = validateMapping(
    [{ target: field.alias ?? field.id, from: 'col', ...mapping }],
    { id: 'ws', name: 'Sheet', fields: [field] },
    { mode: 'append', targetTimezone },
  );
  return mapRecord(plan, { col: raw });
}

function valueOf(result: MapResult): unknown {
  if (!result.ok) throw new Error(`rejected: ${JSON.stringify(result.errors)}`);
  return result.fields[0]?.value;
}

function reasonOf(result: MapResult): string {
  if (result.ok) throw new Error(`accepted: ${JSON.stringify(result.fields)}`);
  expect(result.errors[0]).toMatchObject({ column: 'col' });
  return result.errors[0]!.reason;
}

describe('Date fields', () => {
  it('accepts ISO dates and keeps the date a zone-less value spells', () => {
    expect(valueOf(mapOne(date, '2024-02-29'))).toBe('2024-02-29');
    expect(
      valueOf(mapOne(date, '2024-03-01 23:30:00', { timezone: 'America/New_York' }, 'Asia/Shanghai')),
    ).toBe('2024-03-01');
  });

  it("writes a value carrying an offset as the organisation's date of that instant", () => {
    // 23:30 in New York is 12:30 the next day in Shanghai.
    expect(valueOf(mapOne(date, '2024-03-01T23:30:00-05:00', {}, 'Asia/Shanghai'))).toBe('2024-03-02');
    expect(valueOf(mapOne(date, '2024-03-01T15:59:59Z', {}, 'Asia/Shanghai'))).toBe('2024-03-01');
    expect(valueOf(mapOne(date, '2024-03-01T16:00:00Z', {}, 'Asia/Shanghai'))).toBe('2024-03-02');
  });

  it('parses strictly with a format', () => {
    expect(valueOf(mapOne(date, '31/12/2024', { format: 'DD/MM/YYYY' }))).toBe('2024-12-31');
    expect(reasonOf(mapOne(date, '31/02/2024', { format: 'DD/MM/YYYY' }))).toBe(
      'not a valid date in format "DD/MM/YYYY"',
    );
    expect(reasonOf(mapOne(date, '2024-12-31', { format: 'DD/MM/YYYY' }))).toMatch(/format "DD\/MM\/YYYY"/);
  });

  it('leaves formats with month names to dayjs, still strictly', () => {
    expect(valueOf(mapOne(date, 'Jan 5, 2024', { format: 'MMM D, YYYY' }))).toBe('2024-01-05');
    expect(reasonOf(mapOne(date, 'Jan 05, 2024', { format: 'MMM D, YYYY' }))).toMatch(
      /not a valid date in format/,
    );
  });

  it('rejects impossible and non-ISO dates without a format, saying how to fix it', () => {
    expect(reasonOf(mapOne(date, '2023-02-29'))).toMatch(/no such date/);
    expect(reasonOf(mapOne(date, '12/31/2024'))).toMatch(/ISO 8601.*set `format`/);
  });

  it("writes a JS Date (an instant, e.g. a timestamptz column) as the organisation's date", () => {
    const instant = new Date('2024-05-31T15:00:00Z'); // 23:00 in Shanghai, 00:00 next day in Tokyo
    expect(valueOf(mapOne(date, instant, {}, 'Asia/Tokyo'))).toBe('2024-06-01');
    expect(valueOf(mapOne(date, instant, {}, 'Asia/Shanghai'))).toBe('2024-05-31');
    // The mapping's timezone is for zone-less values only: an instant needs none.
    expect(valueOf(mapOne(date, instant, { timezone: 'Asia/Tokyo' }, 'Asia/Shanghai'))).toBe('2024-05-31');
  });

  it('refuses a bare number unless the format says epoch', () => {
    expect(reasonOf(mapOne(date, 1717200000000))).toMatch(/set format "x"/);
    expect(valueOf(mapOne(date, 1717200000, { format: 'X' }))).toBe('2024-06-01');
  });
});

describe('DateTime fields', () => {
  it('writes the platform format in UTC by default', () => {
    expect(valueOf(mapOne(dateTime, '2024-07-01T12:34:56Z'))).toBe('2024-07-01 12:34:56');
    expect(valueOf(mapOne(dateTime, '2024-07-01 12:34'))).toBe('2024-07-01 12:34:00');
    expect(valueOf(mapOne(dateTime, '2024-07-01'))).toBe('2024-07-01 00:00:00');
  });

  it('reads offset-less values in the mapping timezone, across DST', () => {
    expect(valueOf(mapOne(dateTime, '2024-07-01 12:00:00', { timezone: 'Europe/Berlin' }))).toBe(
      '2024-07-01 10:00:00',
    );
    expect(valueOf(mapOne(dateTime, '2024-01-15 12:00:00', { timezone: 'Europe/Berlin' }))).toBe(
      '2024-01-15 11:00:00',
    );
  });

  it('lets an explicit offset win over the mapping timezone', () => {
    expect(valueOf(mapOne(dateTime, '2024-07-01T12:00:00+05:30', { timezone: 'Europe/Berlin' }))).toBe(
      '2024-07-01 06:30:00',
    );
  });

  it('converts to the target timezone when the platform reads organisation-local times', () => {
    expect(valueOf(mapOne(dateTime, '2024-07-01T00:30:00Z', {}, 'Asia/Shanghai'))).toBe(
      '2024-07-01 08:30:00',
    );
    expect(valueOf(mapOne(dateTime, new Date('2024-12-31T20:00:00Z'), {}, 'Asia/Shanghai'))).toBe(
      '2025-01-01 04:00:00',
    );
  });

  it('parses custom formats strictly', () => {
    const mapping = { format: 'DD.MM.YYYY HH:mm', timezone: 'Europe/Berlin' };
    expect(valueOf(mapOne(dateTime, '24.12.2024 18:00', mapping))).toBe('2024-12-24 17:00:00');
    expect(reasonOf(mapOne(dateTime, '24.12.2024', mapping))).toMatch(/not a valid date in format/);
  });

  it('accepts epoch milliseconds with format x', () => {
    expect(valueOf(mapOne(dateTime, '1719837296000', { format: 'x' }))).toBe('2024-07-01 12:34:56');
    expect(reasonOf(mapOne(dateTime, '17 July', { format: 'x' }))).toMatch(/epoch milliseconds/);
  });

  it('rejects garbage and impossible times', () => {
    expect(reasonOf(mapOne(dateTime, 'yesterday'))).toMatch(/not a date/);
    expect(reasonOf(mapOne(dateTime, '2024-07-01T25:00:00Z'))).toMatch(/no such date or time/);
    expect(reasonOf(mapOne(dateTime, { when: 'now' }))).toMatch(/expected a date string, got an object/);
  });
});

describe('Time fields', () => {
  it('normalises to HH:mm:ss', () => {
    expect(valueOf(mapOne(time, '9:05'))).toBe('09:05:00');
    expect(valueOf(mapOne(time, '23:59:59'))).toBe('23:59:59');
    expect(valueOf(mapOne(time, '9:05 PM', { format: 'h:mm A' }))).toBe('21:05:00');
  });

  it('rejects out-of-range times and non-strings', () => {
    expect(reasonOf(mapOne(time, '24:00'))).toMatch(/not a time of day/);
    expect(reasonOf(mapOne(time, '12:60'))).toMatch(/not a time of day/);
    expect(reasonOf(mapOne(time, 900))).toMatch(/expected a time of day/);
  });

  it("writes a full date-time as the organisation's time of day; a bare time as spelt", () => {
    expect(valueOf(mapOne(time, '2024-07-01T09:30:00Z', {}, 'Asia/Shanghai'))).toBe('17:30:00');
    expect(valueOf(mapOne(time, '2024-07-01 09:30', { timezone: 'Europe/Berlin' }, 'Asia/Shanghai'))).toBe(
      '15:30:00',
    );
    expect(valueOf(mapOne(time, '09:30', { timezone: 'Europe/Berlin' }, 'Asia/Shanghai'))).toBe('09:30:00');
  });

  it('drops the seconds of a subType 1 (HH:mm) field, so the written value reads back the same', () => {
    // platform-shapes §4: Time subType 1 holds HH:mm, 6 HH:mm:ss; §7 and row-create.json
    // write HH:mm:ss ("09:30:00" into the subType 1 field standup_time).
    const minutes: WorksheetField = { ...time, subType: 1 };
    expect(valueOf(mapOne(minutes, '09:30:15'))).toBe('09:30:00');
    expect(valueOf(mapOne(minutes, '9:05 PM', { format: 'h:mm A' }))).toBe('21:05:00');
    expect(valueOf(mapOne(minutes, '7:05:59 AM', { format: 'h:mm:ss A' }))).toBe('07:05:00');
    expect(valueOf(mapOne(minutes, '2024-07-01T09:30:42Z', {}, 'Asia/Shanghai'))).toBe('17:30:00');
    expect(valueOf(mapOne({ ...time, subType: 6 }, '09:30:15'))).toBe('09:30:15');
  });
});

describe('zone clock', () => {
  const berlin = createZoneClock('Europe/Berlin');

  it('moves a wall time in the spring-forward gap forward by the gap', () => {
    expect(new Date(berlin.toInstant(2024, 3, 31, 2, 30, 0)).toISOString()).toBe('2024-03-31T01:30:00.000Z');
  });

  it('takes the earlier instant of an ambiguous autumn wall time', () => {
    expect(new Date(berlin.toInstant(2024, 10, 27, 2, 30, 0)).toISOString()).toBe('2024-10-27T00:30:00.000Z');
  });

  it('formats instants on both sides of a transition', () => {
    expect(berlin.formatDateTime(Date.UTC(2024, 9, 27, 0, 59, 59))).toBe('2024-10-27 02:59:59');
    expect(berlin.formatDateTime(Date.UTC(2024, 9, 27, 1, 0, 0))).toBe('2024-10-27 02:00:00');
  });

  it('handles zones with quarter-hour offsets', () => {
    expect(createZoneClock('Asia/Kathmandu').formatDateTime(Date.UTC(2024, 0, 1, 0, 0, 0))).toBe(
      '2024-01-01 05:45:00',
    );
  });

  it('throws for an unknown zone', () => {
    expect(() => createZoneClock('Mars/Olympus')).toThrow(RangeError);
  });
});
