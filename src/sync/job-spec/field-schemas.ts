/**
 * The `fields` section: target field → where its value comes from, as a shorthand
 * (a source column name) or a mapping object; and its expansion to FieldMapping[].
 */
import { z } from 'zod';
import type { FieldMapping } from '../model/types.ts';
import { dateFormat, nonEmptyString, timeZone } from './schema-checks.ts';

const mappingObject = z
  .strictObject({
    from: nonEmptyString.optional().describe('Source column the value is read from.'),
    value: z.unknown().optional().describe('A constant written to every row (instead of from).'),
    format: dateFormat.optional().describe('Input date format in dayjs tokens, e.g. DD/MM/YYYY.'),
    timezone: timeZone
      .optional()
      .describe('IANA zone the source dates are in (default options.timezone, else UTC).'),
    createOptions: z
      .boolean()
      .optional()
      .describe('Select fields: create options missing from the worksheet.'),
    relationKey: nonEmptyString
      .optional()
      .describe('Relation fields: field of the related worksheet to match on.'),
    lookupBy: z
      .enum(['accountId', 'name', 'email'])
      .optional()
      .describe(
        'Member fields: accountId (as is) or name (exact full name). Emails are masked by the platform: use lookupTable for them.',
      ),
    lookupTable: z
      .record(nonEmptyString, nonEmptyString)
      .optional()
      .describe('Member and department fields: source value -> accountId (or department id).'),
    default: z.unknown().optional().describe('Used when the source value is empty.'),
    conflict: z
      .enum(['newest', 'source', 'worksheet', 'manual'])
      .optional()
      .describe("two-way: this field's conflict policy, instead of target.conflict."),
    direction: z
      .enum(['to-worksheet', 'to-source'])
      .optional()
      .describe(
        'two-way: copy this field one way only (a constant, or a field one side cannot write: formula, auto number, generated column).',
      ),
    trim: z.boolean().optional().describe('Take spaces off both ends of text values first.'),
    map: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'Source value -> value written, e.g. { ja: true, nein: false }; exact text, then ignoring case.',
      ),
    trueValues: z
      .array(nonEmptyString)
      .optional()
      .describe('Texts read as true (Checkbox), ignoring case, e.g. [Ja, X].'),
    falseValues: z.array(nonEmptyString).optional().describe('Texts read as false, ignoring case.'),
    decimal: z
      .enum(['.', ','])
      .optional()
      .describe('Number, Currency, Rating: the decimal mark; "," reads 1.234,50 as 1234.5.'),
  })
  .superRefine((mapping, ctx) => {
    const hasFrom = mapping.from !== undefined;
    const hasValue = 'value' in mapping;
    if (hasFrom === hasValue) {
      ctx.addIssue({
        code: 'custom',
        path: hasFrom ? ['value'] : [],
        message: hasFrom
          ? 'must not be given together with from: use from (a source column) or value (a constant), not both'
          : 'needs from (a source column) or value (a constant)',
      });
    }
    if (hasValue && 'default' in mapping) {
      ctx.addIssue({
        code: 'custom',
        path: ['default'],
        message:
          'only applies with from (it replaces an empty source value); a constant value needs no default',
      });
    }
  });

/** One entry of `fields`: `Column Name` or `{ from | value, ... }`. */
export const fieldValueSchema = z.union(
  [nonEmptyString.describe('Shorthand: a source column name.'), mappingObject],
  {
    error: (issue) =>
      issue.input === undefined || issue.input === null
        ? 'needs a source column name or a mapping { from: Column } / { value: constant }; got nothing'
        : 'must be a source column name (text) or a mapping { from: Column } / { value: constant }',
  },
);

export const fieldsSchema = z
  .record(nonEmptyString, fieldValueSchema)
  .refine((fields) => Object.keys(fields).length > 0, {
    error: 'must map at least one target field, e.g. "order_no: Order Number"',
  })
  .describe('Target field (id or alias) -> source column, or a mapping object.');

/** One `fields` entry as validated: the shorthand string or the mapping object. */
export type FieldValueSpec = z.output<typeof fieldValueSchema>;

/**
 * Expands the shorthand, keeping the order the fields were written in. `defaultTimezone`
 * (options.timezone) fills in mappings without their own zone, so the mapper needs
 * nothing but the mapping to read a date.
 */
export function expandFields(
  fields: Record<string, FieldValueSpec>,
  defaultTimezone?: string,
): FieldMapping[] {
  return Object.entries(fields).map(([target, spec]) => {
    const mapping: FieldMapping =
      typeof spec === 'string' ? { target, from: spec } : expandObject(target, spec);
    if (mapping.timezone === undefined && defaultTimezone !== undefined) mapping.timezone = defaultTimezone;
    return mapping;
  });
}

function expandObject(target: string, spec: Exclude<FieldValueSpec, string>): FieldMapping {
  const mapping: FieldMapping = { target };
  if (spec.from !== undefined) mapping.from = spec.from;
  if ('value' in spec) mapping.value = spec.value;
  if (spec.format !== undefined) mapping.format = spec.format;
  if (spec.timezone !== undefined) mapping.timezone = spec.timezone;
  if (spec.createOptions !== undefined) mapping.createOptions = spec.createOptions;
  if (spec.relationKey !== undefined) mapping.relationKey = spec.relationKey;
  if (spec.lookupBy !== undefined) mapping.lookupBy = spec.lookupBy;
  if (spec.lookupTable !== undefined) mapping.lookupTable = spec.lookupTable;
  if ('default' in spec) mapping.default = spec.default;
  if (spec.trim !== undefined) mapping.trim = spec.trim;
  if (spec.map !== undefined) mapping.map = spec.map;
  if (spec.trueValues !== undefined) mapping.trueValues = spec.trueValues;
  if (spec.falseValues !== undefined) mapping.falseValues = spec.falseValues;
  if (spec.decimal !== undefined) mapping.decimal = spec.decimal;
  return mapping;
}
