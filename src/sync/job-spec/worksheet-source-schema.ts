/**
 * The worksheet source (a pull job reads a worksheet) and the platform filter it may
 * carry, checked for the shapes the platform reads.
 */
import { z } from 'zod';
import { FILTER_OPERATORS } from '../../api/filter-operators.ts';
import type { Filter } from '../../api/types.ts';
import { envPrefix, nonEmptyString } from './schema-checks.ts';

// The operators a field takes depend on its type, which only the worksheet's structure
// tells: the run checks them against it (read-worksheet-rows.ts, validateFilter) and
// refuses the job with the allowed list before any row is read.
const conditionSchema = z.strictObject({
  type: z.literal('condition'),
  field: nonEmptyString,
  operator: z.enum(FILTER_OPERATORS),
  value: z.unknown().optional(),
});

// A getter makes the group recursive; zod emits it as a $ref in the JSON Schema.
const groupSchema = z.strictObject({
  type: z.literal('group'),
  logic: z.enum(['AND', 'OR']),
  get children(): z.ZodArray<z.ZodType<Filter>> {
    return z.array(filterSchema).min(1, { error: 'must hold at least one condition or group' });
  },
});

/**
 * The platform reads two levels (group, group, condition) and a group's children all
 * groups or all conditions (platform-shapes §8 [L]); what it does not read it drops, and
 * a pull would read the whole table where the job meant a part of it.
 */
function checkFilterShape(filter: Filter, ctx: z.RefinementCtx): void {
  const walk = (node: Filter, level: number, path: Array<string | number>): void => {
    if (node.type !== 'group') return;
    const groups = node.children.filter((child) => child.type === 'group').length;
    if (groups > 0 && level >= 1) {
      ctx.addIssue({
        code: 'custom',
        path,
        message:
          'is nested deeper than the two levels the platform reads (group, group, condition); the platform would drop it and answer with every row',
      });
      return;
    }
    if (groups > 0 && groups < node.children.length) {
      ctx.addIssue({
        code: 'custom',
        path,
        message:
          'mixes groups and conditions; the children of one group must be all groups or all conditions (wrap the conditions in a group of their own)',
      });
      return;
    }
    node.children.forEach((child, i) => walk(child, level + 1, [...path, 'children', i]));
  };
  walk(filter, 0, []);
}

const filterSchema: z.ZodType<Filter> = z.discriminatedUnion('type', [conditionSchema, groupSchema]);

export const worksheetSource = z.strictObject({
  type: z.literal('worksheet'),
  worksheet: nonEmptyString.describe('Worksheet id or alias to read.'),
  view: nonEmptyString.optional().describe('View id: read only the rows the view shows.'),
  filter: filterSchema
    .superRefine(checkFilterShape)
    .optional()
    .describe(
      'A platform filter (group or condition): at most two levels, each group holding only groups or only conditions.',
    ),
  fields: z.array(nonEmptyString).min(1, { error: 'must list at least one field' }).optional(),
  credentialsEnvPrefix: envPrefix
    .optional()
    .describe("Read another app's worksheet with credentials from env vars with this prefix."),
  values: z
    .enum(['person', 'raw'])
    .optional()
    .describe(
      'person (default): option texts, member names, relation titles, numbers; raw: the platform read shapes.',
    ),
});
