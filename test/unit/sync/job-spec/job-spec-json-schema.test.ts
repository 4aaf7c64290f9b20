import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { generateJobSpecJsonSchema } from '../../../../src/sync/job-spec/generate-json-schema.ts';
import { JOB_SPEC_SCHEMA_FILE } from '../../../../src/sync/job-spec/write-json-schema.ts';

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  oneOf?: SchemaNode[];
  required?: string[];
  additionalProperties?: unknown;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
}

describe('jobs/job-spec.schema.json', () => {
  it('is up to date with the zod schema (run: node src/sync/job-spec/write-json-schema.ts)', async () => {
    const committed: unknown = JSON.parse(await readFile(JOB_SPEC_SCHEMA_FILE, 'utf8'));
    expect(committed).toEqual(generateJobSpecJsonSchema());
  });

  it('tells editors the keys, the allowed values and the defaults users see in errors', () => {
    const schema = generateJobSpecJsonSchema() as SchemaNode & { $schema?: string };
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(schema.required).toEqual(['name', 'source', 'fields']);
    expect(schema.additionalProperties).toBe(false);
    const target = schema.properties?.target;
    expect(target?.properties?.mode).toMatchObject({
      enum: ['append', 'upsert', 'update', 'mirror', 'two-way'],
      default: 'append',
    });
    expect(target?.properties?.batchSize).toMatchObject({ minimum: 1, maximum: 1000, default: 100 });
    expect(target?.additionalProperties).toBe(false);
    const sourceTypes = schema.properties?.source?.oneOf?.map((option) => option.properties?.type?.const);
    expect(sourceTypes).toEqual([
      'csv',
      'ndjson',
      'json',
      'http',
      'postgres',
      'mysql',
      'postgres-cdc',
      'worksheet',
      'singer',
    ]);
    expect(schema.properties?.options?.properties?.deleteThreshold).toMatchObject({
      default: 0.1,
      maximum: 1,
    });
    // target XOR sink, and a pull job reads a worksheet.
    expect(schema.oneOf).toHaveLength(2);
  });
});
