/**
 * A push job's `target`: the worksheet rows are written into, how (append, upsert,
 * update, mirror, two-way) and by which key.
 */
import { z } from 'zod';
import { envPrefix, intRange, nonEmptyString } from './schema-checks.ts';

/** Where and how a push job writes its rows. */
export const targetSchema = z
  .strictObject({
    worksheet: nonEmptyString.describe('Worksheet id or alias the rows are written to.'),
    mode: z
      .enum(['append', 'upsert', 'update', 'mirror', 'two-way'])
      .default('append')
      .describe(
        'append: create rows; upsert: update by key, else create; update: only update by key; mirror: upsert, then delete rows the source no longer has; two-way: keep the worksheet and a database table in step both ways (docs/two-way.md).',
      ),
    key: z
      .union([
        nonEmptyString,
        z
          .array(nonEmptyString)
          .min(1, { error: 'must name at least one field' })
          .refine((parts) => new Set(parts).size === parts.length, { error: 'names a field twice' }),
      ])
      .optional()
      .describe(
        'Target field matched for upsert, update and mirror, or a list of fields matched on their combination (key: [customer_no, region]); each must be one of the mapped fields.',
      ),
    conflict: z
      .enum(['newest', 'source', 'worksheet', 'manual'])
      .optional()
      .describe(
        'two-way: which side wins a field both sides changed (default newest, which needs source.updatedAtColumn); manual records a conflict.',
      ),
    deletes: z
      .union([
        z.enum(['both', 'none']),
        // postgres-cdc writes `deletes: true`; one meaning kept: true is both, false none.
        z.boolean().transform((on): 'both' | 'none' => (on ? 'both' : 'none')),
      ])
      .optional()
      .describe(
        'two-way: both (default) deletes on the other side a linked record deleted on one side; postgres-cdc: true deletes the worksheet row of a row deleted in the table.',
      ),
    batchSize: intRange(1, 1000).default(100).describe('Rows per write request.'),
    triggerWorkflow: z.boolean().default(false).describe('Whether writes trigger the worksheet workflows.'),
    app: z
      .strictObject({ credentialsEnvPrefix: envPrefix })
      .optional()
      .describe('Write to another app, with credentials from env vars with this prefix.'),
  })
  .superRefine((target, ctx) => {
    if (target.mode !== 'append' && target.key === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['key'],
        message: `is required when mode is ${target.mode}: name the target field that identifies a row (e.g. key: order_no)`,
      });
    }
  });
