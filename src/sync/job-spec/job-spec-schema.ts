/**
 * The job spec format (issue #4): one YAML file per job, a public contract. This zod
 * schema is the single source of truth for validation, the TypeScript types and the
 * JSON Schema that editors use.
 */
import { z } from 'zod';
import type { SourceSpec } from '../sources/source-spec.ts';
import type { FieldMapping } from '../model/types.ts';
import { expandFields, fieldsSchema } from './field-schemas.ts';
import { describeValue, envPrefix, intRange, nonEmptyString, timeZone } from './schema-checks.ts';
import { scheduleSchema } from './schedule-schema.ts';
import { SOURCE_TYPES, sinkSchema, sourceSchema } from './source-schemas.ts';
import { expectSchema, notifyChannelSchema } from './notify-schemas.ts';

export const JOB_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;

const targetSchema = z
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

const optionsSchema = z
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

/** Names a variable holding a hook credential; the value itself never goes in a job file. */
const credentialEnv = (example: string) =>
  z.string().regex(/^[A-Z_][A-Z0-9_]*$/, {
    error: (issue) =>
      `must be the NAME of the environment variable holding the credential: upper-case letters, digits and _ (e.g. ${example}); got ${typeof issue.input === 'string' ? 'another text (not echoed: it may be the credential)' : describeValue(issue.input)}`,
  });

const webhookSchema = z
  .strictObject({
    tokenEnv: credentialEnv('ORDERS_HOOK_TOKEN')
      .optional()
      .describe("Variable holding this job's hook token (instead of ROWBRIDGE_HOOK_TOKEN)."),
    secretEnv: credentialEnv('ORDERS_HOOK_SECRET')
      .optional()
      .describe("Variable holding this job's whsec_ signing secret (instead of ROWBRIDGE_HOOK_SECRET)."),
    debounceMs: intRange(0, 60_000)
      .default(300)
      .describe('Hints arriving within this many milliseconds are merged into one run.'),
  })
  .describe('Settings of POST /hooks/JOB (docs/webhooks.md).');

const triggerSchema = z
  .strictObject({
    webhook: z
      .union([z.boolean(), webhookSchema])
      .optional()
      .describe('true (or an object) lets the platform start a run for the rows it names: POST /hooks/JOB.'),
  })
  .describe('What starts a run besides a schedule and enqueue.');

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

function checkJobAsWhole(value: unknown, ctx: z.RefinementCtx): void {
  if (!isRecord(value)) return;
  const { target, sink, source, fields, incremental } = value;
  if (isRecord(target) && target.mode === 'mirror' && incremental !== undefined) {
    // A mirror deletes the rows its source does not have; an incremental read has only
    // the changed ones, so together they would delete everything else.
    ctx.addIssue({
      code: 'custom',
      path: ['incremental'],
      message:
        'cannot be used with mode mirror: a mirror must read the whole source to know which rows to delete',
    });
  }
  if (isRecord(source) && source.cursorColumn !== undefined && incremental !== undefined) {
    // Two cursor settings would each save progress of their own: which one a run resumes
    // from would be a guess.
    ctx.addIssue({
      code: 'custom',
      path: ['incremental'],
      message: `cannot be given together with source.cursorColumn (${describeValue(source.cursorColumn)}): a job has one cursor; keep source.cursorColumn for a ${describeValue(source.type)} source and drop incremental`,
    });
  }
  if ((target === undefined) === (sink === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: target === undefined ? [] : ['sink'],
      message:
        target === undefined
          ? 'needs target (push into a worksheet) or sink (pull a worksheet out to postgres, csv or ndjson)'
          : 'must not be given together with target: a job either pushes into a worksheet (target) or pulls one out (sink)',
    });
  }
  const sourceType = isRecord(source) ? source.type : undefined;
  if (isRecord(target) && target.mode === 'two-way') checkTwoWay(value, ctx);
  if (sourceType === 'singer') checkSinger(value, ctx);
  if (sourceType === 'postgres-cdc') checkCdc(value, ctx);
  const trigger = value.trigger;
  if (isRecord(trigger) && trigger.webhook !== undefined && trigger.webhook !== false && sink !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['trigger', 'webhook'],
      message: 'needs a push job (target): a hook names rows to write into a worksheet, a pull job has none',
    });
  }
  const knownType = SOURCE_TYPES.some((type) => type === sourceType);
  if (sink !== undefined && knownType && sourceType !== 'worksheet') {
    ctx.addIssue({
      code: 'custom',
      path: ['source', 'type'],
      message: `must be worksheet when the job has a sink (a pull job reads a worksheet); got ${describeValue(sourceType)}`,
    });
  }
  if (!isRecord(fields)) return;
  const mapped = Object.keys(fields);
  const key = isRecord(target) ? target.key : isRecord(sink) ? sink.key : undefined;
  const parts = Array.isArray(key) ? (key as unknown[]) : [key];
  parts.forEach((part, i) => {
    if (typeof part !== 'string' || part === '' || mapped.length === 0 || mapped.includes(part)) return;
    ctx.addIssue({
      code: 'custom',
      path: [isRecord(target) ? 'target' : 'sink', 'key', ...(Array.isArray(key) ? [i] : [])],
      message: `must be one of the mapped fields (${mapped.join(', ')}), so every row has a key to match on; got ${describeValue(part)}`,
    });
  });
}

/** Change capture writes each change by key, and streams: no cursor, no mirror sweep. */
function checkCdc(value: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const { target, incremental } = value;
  if (isRecord(target) && target.mode !== 'upsert' && target.mode !== 'update') {
    ctx.addIssue({
      code: 'custom',
      path: ['target', 'mode'],
      message: `must be upsert or update for a postgres-cdc source (each change is written by key; deletes: true deletes); got ${describeValue(target.mode)}`,
    });
  }
  if (incremental !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['incremental'],
      message: 'cannot be used with a postgres-cdc source: the replication slot keeps the position',
    });
  }
}

/**
 * A singer job writes what a tap sends, in chunks between its STATEs: no chunk holds the
 * whole source (so no mirror deletes), the tap's STATE is the bookmark (no cursor of
 * ours), and only `rowbridge singer` has the tap's output (no schedule, no hook).
 */
function checkSinger(value: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const { target, incremental, schedule, trigger } = value;
  const refuse = (path: string[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  if (isRecord(target) && (target.mode === 'mirror' || target.mode === 'two-way'))
    refuse(
      ['target', 'mode'],
      `must be append, upsert or update with a singer source (a tap's output arrives in chunks, none of them the whole source); got ${describeValue(target.mode)}`,
    );
  if (incremental !== undefined)
    refuse(['incremental'], "cannot be used with a singer source: the tap's STATE is its bookmark");
  if (schedule !== undefined)
    refuse(['schedule'], 'cannot be used with a singer source: run it as `tap | rowbridge singer JOB`');
  if (isRecord(trigger) && trigger.webhook !== undefined && trigger.webhook !== false)
    refuse(
      ['trigger', 'webhook'],
      'cannot be used with a singer source: run it as `tap | rowbridge singer JOB`',
    );
}

/** Two-way needs a table with its primary key, and `newest` needs the table's update times. */
function checkTwoWay(value: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const { source, target, fields, incremental } = value;
  if (!isRecord(source) || !isRecord(target)) return;
  if (source.type !== 'postgres' && source.type !== 'mysql') {
    ctx.addIssue({
      code: 'custom',
      path: ['source', 'type'],
      message: `must be postgres or mysql for mode two-way (a table, kept in step with the worksheet); got ${describeValue(source.type)}`,
    });
    return;
  }
  if (source.table === undefined || source.keyColumn === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['source', source.table === undefined ? 'table' : 'keyColumn'],
      message: 'is required for mode two-way: rowbridge writes back into a table by its primary key',
    });
  }
  if (incremental !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['incremental'],
      message: 'cannot be used with mode two-way: a two-way run reads both sides whole to see deletes',
    });
  }
  const fieldPolicies = isRecord(fields)
    ? Object.values(fields).map((f) => (isRecord(f) ? f.conflict : undefined))
    : [];
  const newest = (target.conflict ?? 'newest') === 'newest' || fieldPolicies.includes('newest');
  if (newest && source.updatedAtColumn === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['source', 'updatedAtColumn'],
      message:
        'is required for conflict: newest (the default of mode two-way): name the column holding when a row last changed, or choose conflict: source | worksheet | manual',
    });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

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

/**
 * A SQL source's own cursorColumn is the job's one cursor (issue 23 §4: the two settings
 * together are refused): each run reads past the value the last one saved, as
 * `incremental` does for other sources. Not for a mirror or two-way job, which read the
 * whole table and only page by it, nor for the keyColumn default, which is paging only.
 */
function sqlCursorAsIncremental(spec: {
  source: { type: string };
  target?: { mode: string } | undefined;
}): { cursor: string } | undefined {
  if (spec.source.type !== 'postgres' && spec.source.type !== 'mysql') return undefined;
  const { cursorColumn } = spec.source as { cursorColumn?: string };
  const mode = spec.target?.mode;
  if (cursorColumn === undefined || mode === undefined || mode === 'mirror' || mode === 'two-way')
    return undefined;
  return { cursor: cursorColumn };
}

/**
 * A table source without a cursor column pages by the job's incremental cursor when it
 * has one (each run then reads the rows changed since the last: paging by the key would
 * save a key as the cursor and never read an edited row again), else by its key.
 */
function withDefaultCursor<S extends { type: string }>(source: S, incrementalCursor: string | undefined): S {
  if (source.type !== 'postgres' && source.type !== 'mysql') return source;
  const sql = source as S & { cursorColumn?: string; keyColumn?: string };
  if (sql.cursorColumn !== undefined) return source;
  const cursorColumn = incrementalCursor ?? sql.keyColumn;
  return cursorColumn === undefined ? source : { ...sql, cursorColumn };
}

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
