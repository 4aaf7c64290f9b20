/** The file sources (csv, ndjson, json): a path, and how to read what it holds. */
import { z } from 'zod';
import { nonEmptyString } from './schema-checks.ts';

/** A file's path as a job names it. */
export const filePath = nonEmptyString.describe(
  "File path; a relative path resolves against the job file's folder.",
);

export const csvSource = z.strictObject({
  type: z.literal('csv'),
  path: filePath,
  delimiter: nonEmptyString
    .optional()
    .describe('Field delimiter (default ",", or ";" / tab when the first line has those and no ",").'),
  quote: z.string().length(1, { error: 'must be a single character' }).optional(),
  header: z.boolean().optional().describe('Whether the first line names the columns (default true).'),
  encoding: z
    .enum(['utf8', 'latin1', 'gbk', 'gb18030', 'utf16le'])
    .optional()
    .describe('Character set (default utf8); gbk or gb18030 as Chinese Excel saves CSV.'),
  skipEmptyLines: z.boolean().optional(),
});

export const ndjsonSource = z.strictObject({ type: z.literal('ndjson'), path: filePath });

export const itemsPath = nonEmptyString.describe(
  'Dot path to the array of records in the document (e.g. data.items).',
);

export const jsonSource = z.strictObject({
  type: z.literal('json'),
  path: filePath,
  itemsPath: itemsPath.optional(),
});
