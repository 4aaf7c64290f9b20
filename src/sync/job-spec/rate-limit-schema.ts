/** A source's `rateLimit`: the third party's limit on this job, across every worker reading its chunks. */
import { z } from 'zod';
import { intRange } from './schema-checks.ts';

export const rateLimit = z
  .strictObject({
    perSecond: z
      .number()
      .positive()
      .max(10_000)
      .optional()
      .describe('Requests or queries started per second.'),
    concurrent: intRange(1, 1000).optional().describe('Requests or queries in flight at once.'),
  })
  .refine((limit) => limit.perSecond !== undefined || limit.concurrent !== undefined, {
    error: 'needs perSecond, concurrent or both',
  })
  .describe('Limit on the source across all workers (retries count); e.g. { perSecond: 5, concurrent: 2 }.');
