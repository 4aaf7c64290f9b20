/**
 * Sinks: where a pull job (source type worksheet) writes the rows it reads, discriminated
 * on `type`. Connection URLs are named by env var, never written here.
 */
import { z } from 'zod';
import { filePath } from './file-source-schemas.ts';
import { envVarName, nonEmptyString, sqlIdentifier } from './schema-checks.ts';

const fileSinkKey = z
  .union([
    nonEmptyString,
    z
      .array(nonEmptyString)
      .min(1, { error: 'must name at least one column' })
      .refine((parts) => new Set(parts).size === parts.length, { error: 'names a column twice' }),
  ])
  .optional()
  .describe(
    'Column(s) that identify a row: the file holds each key once; an incremental pull replaces the rows whose key it reads again and keeps the others (default: the column mapped from rowid).',
  );

const timeFormat = z
  .enum(['wall', 'iso'])
  .optional()
  .describe(
    "Times, DateTime fields and system times alike: wall (the organisation's clock, default) or iso (ISO 8601 with offset).",
  );

/** Where a pull job (source type worksheet) writes the rows it reads. */
export const sinkSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('postgres'),
    urlEnv: envVarName('REPORTING_DB_URL').describe('Name of the env var that holds the connection URL.'),
    table: sqlIdentifier,
    key: sqlIdentifier.describe('Column rows are upserted by; must be one of the mapped fields.'),
    createTable: z.boolean().optional(),
  }),
  z.strictObject({
    type: z.literal('csv'),
    path: filePath,
    key: fileSinkKey,
    delimiter: nonEmptyString.optional(),
    formulaEscape: z
      .boolean()
      .optional()
      .describe(
        "Prefix text cells starting with =, +, -, @, tab or CR with ' so spreadsheets do not run them as formulas (default true).",
      ),
    timeFormat,
  }),
  z.strictObject({ type: z.literal('ndjson'), path: filePath, key: fileSinkKey, timeFormat }),
]);
