/**
 * Sources (where a job reads) and sinks (where a pull job writes), discriminated on
 * `type`. The shapes are shared with src/sync/sources/source-spec.ts; connection URLs
 * and credentials are named by env var, never written here.
 */
import { z } from 'zod';
import { FILTER_OPERATORS } from '../../api/filter-operators.ts';
import type { Filter } from '../../api/types.ts';
import { statementProblem } from '../sources/sql-statement.ts';
import {
  credentialSafeMap,
  envPrefix,
  envVarName,
  intRange,
  nonEmptyString,
  sqlIdentifier,
} from './schema-checks.ts';

const path = nonEmptyString.describe("File path; a relative path resolves against the job file's folder.");

const csvSource = z.strictObject({
  type: z.literal('csv'),
  path,
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

const ndjsonSource = z.strictObject({ type: z.literal('ndjson'), path });

const itemsPath = nonEmptyString.describe(
  'Dot path to the array of records in the document (e.g. data.items).',
);

const jsonSource = z.strictObject({ type: z.literal('json'), path, itemsPath: itemsPath.optional() });

const pagination = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('page'),
    pageParam: nonEmptyString.optional(),
    sizeParam: nonEmptyString.optional(),
    pageSize: intRange(1, 10_000).optional(),
    startPage: intRange(0, 1_000_000).optional(),
  }),
  z.strictObject({
    type: z.literal('cursor'),
    cursorParam: nonEmptyString.describe('Query parameter the next cursor is sent in.'),
    cursorPath: nonEmptyString.describe('Dot path to the next cursor in a response.'),
  }),
  z.strictObject({ type: z.literal('none') }),
]);

// The third party's limit on this job, across every worker reading its chunks.
const rateLimit = z
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

const httpSource = z.strictObject({
  type: z.literal('http'),
  url: z
    .string()
    .superRefine((url, ctx) => {
      let parsed: URL | undefined;
      try {
        parsed = new URL(url.replace(/\$\{[A-Z_][A-Z0-9_]*\}/g, 'x'));
      } catch {
        parsed = undefined;
      }
      if (parsed === undefined || !['http:', 'https:'].includes(parsed.protocol)) {
        ctx.addIssue({ code: 'custom', message: 'must be an absolute http:// or https:// URL' });
      } else if (parsed.username !== '' || parsed.password !== '') {
        // Not echoed: the user:password part is the secret.
        ctx.addIssue({
          code: 'custom',
          message:
            'must not contain a user name or password: send credentials in a header such as Authorization: "Bearer ${ENV_NAME}"',
        });
      }
    })
    .describe('Absolute http(s) URL; ${ENV_NAME} references are replaced from the environment.'),
  method: z.enum(['GET', 'POST']).optional(),
  headers: credentialSafeMap('header').optional().describe('Credentials only as ${ENV_NAME} references.'),
  query: credentialSafeMap('query').optional(),
  itemsPath: itemsPath.optional(),
  pagination: pagination.optional(),
  maxPages: intRange(1, 1_000_000).optional(),
  connectTimeoutMs: intRange(1, 600_000)
    .optional()
    .describe('Longest wait in ms for the connection, TLS included (default 10000).'),
  headersTimeoutMs: intRange(1, 3_600_000)
    .optional()
    .describe('Longest wait in ms for the response headers of a request (default 60000).'),
  bodyTimeoutMs: intRange(1, 3_600_000)
    .optional()
    .describe('Longest pause in ms between two pieces of a response body (default 60000).'),
  maxResponseBytes: intRange(1, 8 * 1024 ** 3)
    .optional()
    .describe('Largest response body in bytes; a larger one fails the read (default 268435456, 256 MiB).'),
  rateLimit: rateLimit.optional(),
});

function sqlSource<T extends 'postgres' | 'mysql'>(type: T, example: string) {
  return z
    .strictObject({
      type: z.literal(type),
      urlEnv: envVarName(example).describe('Name of the env var that holds the connection URL.'),
      table: sqlIdentifier.optional(),
      query: nonEmptyString
        .optional()
        .describe('A SELECT; the cursor condition and order are added by rowbridge.'),
      cursorColumn: sqlIdentifier
        .optional()
        .describe(
          'Column whose growing value marks progress (e.g. updated_at); a table defaults to keyColumn.',
        ),
      keyColumn: sqlIdentifier.optional(),
      updatedAtColumn: sqlIdentifier
        .optional()
        .describe('two-way: column holding when a row last changed; conflict: newest needs it.'),
      writeUrlEnv: envVarName(example)
        .optional()
        .describe('two-way: env var with the connection URL writes use (default urlEnv).'),
      batchSize: intRange(1, 100_000).optional(),
      allowPrivilegedSource: z
        .boolean()
        .optional()
        .describe(
          'Read even with a login that can do more than SELECT (superuser, file, program or write rights); default false: such a login is refused.',
        ),
      rateLimit: rateLimit.optional(),
    })
    .superRefine((source, ctx) => {
      const problem = source.query === undefined ? undefined : statementProblem(source.query, type);
      if (problem !== undefined) {
        // Not echoed whole: a pasted script may hold anything.
        ctx.addIssue({
          code: 'custom',
          path: ['query'],
          message: `must be one SELECT statement (it is wrapped as a subquery and run read-only); ${problem}`,
        });
      }
      if (
        source.cursorColumn === undefined &&
        (source.table === undefined || source.keyColumn === undefined)
      ) {
        ctx.addIssue({
          code: 'custom',
          path: ['cursorColumn'],
          message:
            'is required unless the source reads a table with a keyColumn (it then defaults to keyColumn)',
        });
      }
      if ((source.table === undefined) === (source.query === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: source.table === undefined ? [] : ['query'],
          message: 'needs exactly one of table (a table name) or query (a SELECT statement)',
        });
      }
    });
}

// Slot and publication names: lower-case identifiers, as PostgreSQL folds unquoted ones.
const replicationName = z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, {
  error: 'must be lower-case letters, digits and _ (at most 63), starting with a letter or _',
});

const postgresCdcSource = z.strictObject({
  type: z.literal('postgres-cdc'),
  urlEnv: envVarName('ORDERS_DB').describe('Name of the env var that holds the connection URL.'),
  table: sqlIdentifier.describe('The captured table, table or schema.table.'),
  keyColumn: sqlIdentifier.describe("The table's primary key column."),
  slot: replicationName.describe('Logical replication slot (pgoutput) rowbridge reads from.'),
  publication: replicationName.describe('Publication naming the table.'),
  batchSize: intRange(1, 100_000).optional().describe('Rows per snapshot page (default 1000).'),
  allowPrivilegedSource: z
    .boolean()
    .optional()
    .describe('Read even with a superuser login; default false (a REPLICATION role is accepted).'),
});

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

const worksheetSource = z.strictObject({
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

const singerSource = z.strictObject({
  type: z.literal('singer'),
  stream: nonEmptyString.describe(
    "The tap's stream this job writes (the stream of its SCHEMA and RECORD messages); run as `tap | rowbridge singer JOB`.",
  ),
});

/** Where a job reads its records. */
export const sourceSchema = z.discriminatedUnion('type', [
  csvSource,
  ndjsonSource,
  jsonSource,
  httpSource,
  sqlSource('postgres', 'ORDERS_DB_URL'),
  sqlSource('mysql', 'ORDERS_DB_URL'),
  postgresCdcSource,
  worksheetSource,
  singerSource,
]);

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
    path,
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
  z.strictObject({ type: z.literal('ndjson'), path, key: fileSinkKey, timeFormat }),
]);

/** Every source `type` a job may name. */
export const SOURCE_TYPES = sourceSchema.options.map((option) => option.shape.type.value);
