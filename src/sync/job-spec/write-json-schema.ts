/**
 * Writes jobs/job-spec.schema.json. Run after changing the job spec schema:
 *   node src/sync/job-spec/write-json-schema.ts
 * A unit test fails while the committed file is out of date.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { generateJobSpecJsonSchema } from './generate-json-schema.ts';

/** Where the schema lives, next to the jobs it describes. */
export const JOB_SPEC_SCHEMA_FILE = fileURLToPath(
  new URL('../../../jobs/job-spec.schema.json', import.meta.url),
);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // Formatted the way `npm run format` would, so formatting the repo never changes it.
  // prettier is a dev dependency: this script is a development tool, never run in production.
  const prettier = await import('prettier');
  const options = await prettier.resolveConfig(JOB_SPEC_SCHEMA_FILE);
  const text = await prettier.format(JSON.stringify(generateJobSpecJsonSchema()), {
    ...options,
    filepath: JOB_SPEC_SCHEMA_FILE,
  });
  await writeFile(JOB_SPEC_SCHEMA_FILE, text);
  process.stdout.write(`wrote ${JOB_SPEC_SCHEMA_FILE}\n`);
}
