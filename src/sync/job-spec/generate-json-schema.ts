/**
 * The JSON Schema of job spec files, generated from the zod schema so that editors
 * (yaml-language-server, VS Code) complete and check exactly what the loader accepts.
 */
import { z } from 'zod';
import { jobSpecSchema } from './job-spec-schema.ts';

/**
 * Builds the schema for the input side (what users write, defaults shown as defaults).
 * Draft 7, because it is the draft every YAML editor plugin reads.
 */
export function generateJobSpecJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(jobSpecSchema, { io: 'input', target: 'draft-7', unrepresentable: 'any' });
  const { $schema, ...rest } = generated;
  return {
    $schema,
    title: 'rowbridge job spec',
    description:
      'One sync job: read records from source, map them through fields and write them into a worksheet (target), ' +
      'or read a worksheet (source type worksheet) and write it out (sink). The file name is the job name.',
    ...rest,
    // Cross-field rules zod checks in code; the ones a schema can say, said for editors too.
    oneOf: [
      { required: ['target'], not: { required: ['sink'] } },
      {
        required: ['sink'],
        not: { required: ['target'] },
        properties: { source: { properties: { type: { const: 'worksheet' } } } },
      },
    ],
  };
}
