/**
 * Zone-less database timestamps stay wall clocks. Left to the drivers, a PostgreSQL
 * `timestamp`/`date` or a MySQL `DATETIME`/`DATE` becomes a JS Date in the process's
 * zone, an instant the column never stated: a `timezone: America/New_York` mapping then
 * landed 12-13 h off. As text, the mapping reads them in its own `timezone`, and
 * columns that do hold an instant (`timestamptz`, MySQL `TIMESTAMP`) stay Dates.
 */
import pg from 'pg';

// pg's type OIDs: https://github.com/brianc/node-pg-types (builtins).
const PG_DATE = 1082;
const PG_TIMESTAMP = 1114;

const asText = (value: string): string => value;

/** The `types` option of a pg Client: zone-less dates and timestamps as their text. */
export const pgWallClockTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === PG_DATE || oid === PG_TIMESTAMP) return asText;
    return pg.types.getTypeParser(oid, format) as (value: string) => unknown;
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** The `dateStrings` option of a mysql2 connection: zone-less types as their text. */
export const MYSQL_WALL_CLOCK_TYPES: Array<'DATE' | 'DATETIME'> = ['DATE', 'DATETIME'];
