/** A job's `options`: mirror delete guards, option creation and the source dates' zone. */
import { z } from 'zod';
import { describeValue, timeZone } from './schema-checks.ts';

/** A job's `options`, each with its default. */
export const optionsSchema = z
  .strictObject({
    deleteThreshold: z
      .number({
        error: (issue) => `must be a share from 0 to 1 (0.1 = 10%); got ${describeValue(issue.input)}`,
      })
      .min(0, { error: 'must be a share from 0 to 1 (0.1 = 10%)' })
      .max(1, { error: 'must be a share from 0 to 1 (0.1 = 10%)' })
      .default(0.1)
      .describe('mirror: refuse a run that would delete more than this share of the worksheet rows.'),
    forceDelete: z.boolean().default(false).describe('mirror: delete even past deleteThreshold.'),
    permanentDelete: z
      .boolean()
      .default(false)
      .describe('mirror: delete permanently instead of to the recycle bin.'),
    createMissingOptions: z
      .boolean()
      .default(false)
      .describe('Select fields: create options missing from the worksheet.'),
    timezone: timeZone.optional().describe('Zone of source dates for mappings without their own timezone.'),
  })
  .prefault({});
