/**
 * Loads a job spec file: YAML → data → validated JobSpec. Every problem found is
 * reported at once, each with the file, line, column and path it concerns.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { JobSpecError } from './job-spec-error.ts';
import type { JobSpecIssue } from './job-spec-error.ts';
import { JOB_NAME_PATTERN, jobSpecSchema } from './job-spec-schema.ts';
import type { JobSpec } from './job-spec-schema.ts';
import { locateInYaml } from './locate-in-yaml.ts';
import { createIssueMessages } from './zod-issues.ts';
import type { PathIssue } from './zod-issues.ts';
import { describeValue } from './schema-checks.ts';

/** Renders a path as users read it: `fields["Order No"].from`, `source.headers.Authorization`. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((segment, index) => {
      if (typeof segment === 'number') return `[${segment}]`;
      const text = String(segment);
      if (/^[A-Za-z_$][\w$-]*$/.test(text)) return index === 0 ? text : `.${text}`;
      return `[${JSON.stringify(text)}]`;
    })
    .join('');
}

/** The job name a file must carry: its base name without .yaml or .yml. */
export function jobNameOfFile(file: string): string {
  return basename(file).replace(/\.ya?ml$/i, '');
}

function nameMatchesFile(data: unknown, file: string): PathIssue | undefined {
  if (typeof data !== 'object' || data === null || !('name' in data)) return undefined;
  const { name } = data;
  const expected = jobNameOfFile(file);
  if (typeof name !== 'string' || !JOB_NAME_PATTERN.test(name) || name === expected) return undefined;
  const fix = JOB_NAME_PATTERN.test(expected)
    ? `must equal the file name "${expected}" (a job's name is its file name)`
    : `must equal the file name, and "${expected}" is not a valid job name: rename the file to ${name}.yaml`;
  return { path: ['name'], message: `${fix}; got ${describeValue(name)}` };
}

/**
 * Parses and validates a job spec from its text. `file` names it in messages and fixes
 * the job name (its base name). Throws JobSpecError listing every issue.
 */
export function parseJobSpec(text: string, file: string): JobSpec {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, merge: true });
  if (doc.errors.length > 0) {
    throw new JobSpecError(
      file,
      doc.errors.map((error) => {
        const { line, col } = lineCounter.linePos(error.pos[0]);
        // yaml appends a copy of the source line to some messages; the line may hold a secret.
        const message =
          error.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? error.code;
        return { file, path: '', line, column: col, message: `is not valid YAML: ${message}` };
      }),
    );
  }
  const data: unknown = doc.toJS({ maxAliasCount: 100 });
  if (data === null || data === undefined) {
    throw new JobSpecError(file, [
      {
        file,
        path: '',
        line: 1,
        column: 1,
        message: 'is empty: a job needs name, source, target (or sink) and fields',
      },
    ]);
  }
  const { errorMap, toPathIssues } = createIssueMessages();
  const result = jobSpecSchema.safeParse(data, { error: errorMap });
  const found = result.success ? [] : toPathIssues(result.error.issues);
  const nameIssue = nameMatchesFile(data, file);
  if (nameIssue !== undefined) found.push(nameIssue);

  if (result.success && found.length === 0) return result.data as JobSpec;
  const issues = found.map((issue): JobSpecIssue => {
    const position = locateInYaml(doc, lineCounter, issue.path, issue.atKey === true);
    return {
      file,
      path: formatPath(issue.path),
      ...(position === undefined ? {} : { line: position.line, column: position.column }),
      message: issue.message,
    };
  });
  // Document order reads best; issues without a position go last.
  issues.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity) || (a.column ?? 0) - (b.column ?? 0));
  throw new JobSpecError(file, issues);
}

/** Reads and validates a job spec file. Throws JobSpecError, also when the file cannot be read. */
export async function loadJobSpec(file: string): Promise<JobSpec> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String((error as Error).message);
    throw new JobSpecError(file, [{ file, path: '', message: `cannot be read: ${reason}` }], {
      cause: error,
    });
  }
  return parseJobSpec(text, file);
}
