/**
 * A SCHEMA of the job's stream against the job's mapping, as a missing column is for a
 * file (source-columns.ts): a property the mapping reads that the stream does not
 * declare would blank its field on every row, so it stops the read before the records
 * after it are written.
 */
import { ConfigError } from '../../ground/errors.ts';
import { missingColumns } from '../read/source-columns.ts';
import type { SingerSourceSpec } from '../sources/source-spec.ts';
import type { FieldMapping } from '../model/types.ts';
import type { SingerSchema } from './singer-message.ts';

/** Throws a ConfigError naming each mapped property `schema` lacks; `where` is `stdin line 12`. */
export function checkSingerSchema(
  job: string,
  spec: SingerSourceSpec,
  mappings: readonly FieldMapping[],
  schema: SingerSchema,
  where: string,
): void {
  const declared = Object.fromEntries(schema.properties.map((p) => [p, undefined]));
  const { missing } = missingColumns(spec, mappings, [declared]);
  if (missing.length === 0) return;
  const lines = missing.map((m) => `  - ${m.target}: { from: ${m.from} }: no such property`);
  throw new ConfigError(
    `job ${job}: ${where}: the SCHEMA of stream ${spec.stream} lacks ${missing.length === 1 ? 'a property' : 'properties'} the mapping reads; no record after it was written:\n` +
      `${lines.join('\n')}\n  its properties: ${schema.properties.join(', ') || '(none)'}`,
  );
}
