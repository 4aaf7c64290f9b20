/**
 * The job spec format (issue #4): one YAML file per job, a public contract. This zod
 * schema is the single source of truth for validation, the TypeScript types and the
 * JSON Schema that editors use.
 */
import { z } from 'zod';
import type { SourceSpec } from '../sources/source-spec.ts';
import type { FieldMapping } from '../model/types.ts';
import { expandFields, fieldsSchema } from './field-schemas.ts';
import { describeValue, nonEmptyString } from './schema-checks.ts';
import { scheduleSchema } from './schedule-schema.ts';
import { sinkSchema } from './sink-schemas.ts';
import { sourceSchema } from './source-schemas.ts';
import { expectSchema, notifyChannelSchema } from './notify-schemas.ts';
import { optionsSchema } from './options-schema.ts';
import { sqlCursorAsIncremental, withDefaultCursor } from './sql-cursor-defaults.ts';
import { targetSchema } from './target-schema.ts';
import { triggerSchema } from './trigger-schema.ts';
import { checkJobAsWhole } from './whole-job-checks.ts';

export const JOB_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;

const jobObjectSchema = z
  .strictObject({
    name: z
      .string({
        error: (issue) =>
          issue.input === undefined
            ? 'is required: the job name, which equals the file name without .yaml'
            : `must be text (the job name); got ${describeValue(issue.input)}`,
      })
      .regex(JOB_NAME_PATTERN, {
        error: (issue) =>
          `must be lower-case letters, digits, - and _ starting with a letter or digit (and equal the file name); got ${describeValue(issue.input)}`,
      })
      .describe('The job name; equals the file name without .yaml.'),
    description: z.string().optional(),
    source: sourceSchema,
    target: targetSchema.optional().describe('Push: write the records into a worksheet.'),
    sink: sinkSchema.optional().describe('Pull: write the worksheet rows (source type worksheet) out.'),
    fields: fieldsSchema,
    schedule: scheduleSchema.optional(),
    trigger: triggerSchema.optional(),
    incremental: z
      .strictObject({ cursor: nonEmptyString.describe('Source column whose value marks progress.') })
      .optional()
      .describe('Read only the source records past the saved cursor.'),
    options: optionsSchema,
    notify: z
      .array(notifyChannelSchema)
      .optional()
      .describe('Channels told about this job, besides those of ROWBRIDGE_NOTIFY (docs/notifications.md).'),
    expect: expectSchema.optional(),
  })
  // Runs even when parts are invalid, so one pass reports every problem; hence `unknown`.
  .superRefine((value, ctx) => checkJobAsWhole(value, ctx), { when: () => true });

/** The zod schema of a job spec file; parsing also expands `fields` into `mappings`. */
export const jobSpecSchema = jobObjectSchema.transform((spec) => {
  const incremental = spec.incremental ?? sqlCursorAsIncremental(spec);
  return {
    ...spec,
    ...(incremental === undefined ? {} : { incremental }),
    source: withDefaultCursor(spec.source, spec.incremental?.cursor),
    mappings: expandFields(spec.fields, spec.options.timezone),
  };
});

/** Removes `| undefined` that zod adds to optional keys: absent keys stay absent. */
type Exact<T> = T extends readonly (infer E)[]
  ? Exact<E>[]
  : T extends object
    ? { [K in keyof T]: undefined extends T[K] ? Exact<Exclude<T[K], undefined>> : Exact<T[K]> }
    : T;

type ParsedJob = Exact<Omit<z.output<typeof jobObjectSchema>, 'mappings'>>;

// Compile-time: the loader and the sources agree on every source shape, both ways, so
// a field added on one side only fails `tsc` instead of being dropped at run time.
// Optional keys are compared as required ones, else an extra optional key would pass.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type DeepRequired<T> = T extends readonly (infer E)[]
  ? DeepRequired<E>[]
  : T extends object
    ? { [K in keyof T]-?: DeepRequired<T[K]> }
    : T;
type Assert<T extends true> = T;
/** Compile-time only: fails `tsc` when the loader's and the sources' shapes drift apart. */
export type _SourceShapesAgree = Assert<Same<DeepRequired<ParsedJob['source']>, DeepRequired<SourceSpec>>>;

/** A validated job spec, defaults applied, with `fields` expanded into `mappings`. */
export type JobSpec = Omit<ParsedJob, 'source'> & {
  /** Where records are read (the sources' own type). */
  source: SourceSpec;
  /** `fields` expanded: one mapping per target field, in file order. */
  mappings: FieldMapping[];
};

/** What a user writes: the input side of the schema (defaults not yet applied). */
export type JobSpecInput = z.input<typeof jobObjectSchema>;
