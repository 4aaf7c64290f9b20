/**
 * Sources: where a job reads, discriminated on `type`. The shapes are shared with
 * src/sync/sources/source-spec.ts; connection URLs and credentials are named by env
 * var, never written here. Files, http and worksheet sources have modules of their own.
 */
import { z } from 'zod';
import { statementProblem } from '../sources/sql-statement.ts';
import { csvSource, jsonSource, ndjsonSource } from './file-source-schemas.ts';
import { httpSource } from './http-source-schema.ts';
import { envVarName, intRange, nonEmptyString, sqlIdentifier } from './schema-checks.ts';
import { rateLimit } from './rate-limit-schema.ts';
import { worksheetSource } from './worksheet-source-schema.ts';

// Replication origin names: as slot names, lower-case identifiers.
const originName = z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, {
  error: 'must be lower-case letters, digits and _ (at most 63), starting with a letter or _',
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
      origin: originName
        .optional()
        .describe(
          'two-way, postgres: replication origin marking the writes, dropped by a postgres-cdc job with the same origin.',
        ),
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
      if (type === 'mysql' && source.origin !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['origin'],
          message: 'is for a PostgreSQL table only (MySQL has no replication origins)',
        });
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
  origin: originName
    .optional()
    .describe("Replication origin of rowbridge's own writes (a two-way job's): not captured."),
  allowPrivilegedSource: z
    .boolean()
    .optional()
    .describe('Read even with a superuser login; default false (a REPLICATION role is accepted).'),
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

/** Every source `type` a job may name. */
export const SOURCE_TYPES = sourceSchema.options.map((option) => option.shape.type.value);
