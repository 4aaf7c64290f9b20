/**
 * Loads a job spec file: YAML → data → validated JobSpec. Every problem found is
 * reported at once, each with the file, line, column and path it concerns.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { Document } from 'yaml';
import { aliasExpansion } from './alias-expansion.ts';
import { JobSpecError } from './job-spec-error.ts';
import type { JobSpecIssue } from './job-spec-error.ts';
import { JOB_NAME_PATTERN, jobSpecSchema } from './job-spec-schema.ts';
import type { JobSpec } from './job-spec-schema.ts';
import { locateInYaml } from './locate-in-yaml.ts';
import { yamlCodeFrame } from './yaml-code-frame.ts';
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

/** The largest job spec file read: a job is a page of YAML, not a data file. */
export const MAX_JOB_SPEC_BYTES = 1024 * 1024;
/**
 * Values YAML aliases may add to a spec beyond the ones written: anchors share blocks, a
 * few levels of aliases of aliases (a "billion laughs") would expand to gigabytes.
 */
export const MAX_ALIAS_EXPANSION = 100_000;

function wholeFileIssue(file: string, message: string, line?: number, column?: number): JobSpecError {
  return new JobSpecError(file, [
    { file, path: '', ...(line === undefined ? {} : { line, column: column ?? 1 }), message },
  ]);
}

function tooLarge(file: string, bytes: number): JobSpecError {
  return wholeFileIssue(
    file,
    `is ${bytes} bytes, over the ${MAX_JOB_SPEC_BYTES} bytes (1 MB) a job spec may hold; move data into a source file`,
  );
}

/**
 * The YAML of a job spec as plain data, with its document for locating issues. Throws
 * JobSpecError naming the file for anything the text cannot give: over 1 MB, invalid
 * YAML, aliases that expand past {@link MAX_ALIAS_EXPANSION} values, any parser failure.
 */
export function readJobSpecYaml(
  text: string,
  file: string,
): { data: unknown; doc: Document.Parsed; lineCounter: LineCounter } {
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_JOB_SPEC_BYTES) throw tooLarge(file, bytes);
  const lineCounter = new LineCounter();
  let doc: Document.Parsed;
  try {
    doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, merge: true });
  } catch (error) {
    throw wholeFileIssue(file, `is not valid YAML: ${(error as Error).name}`);
  }
  const [error] = doc.errors;
  if (error !== undefined) {
    // The first error only: the parser's next ones follow from it (a cascade, not news).
    const { line, col } = lineCounter.linePos(error.pos[0]);
    // yaml appends a copy of the source line to some messages; the line may hold a secret.
    const message = error.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? error.code;
    throw new JobSpecError(file, [
      {
        file,
        path: '',
        line,
        column: col,
        message: `is not valid YAML: ${message}`,
        frame: yamlCodeFrame(text, line, col),
      },
    ]);
  }
  const expansion = aliasExpansion(doc, MAX_ALIAS_EXPANSION);
  if (expansion !== undefined) {
    const { line, col } = lineCounter.linePos(expansion.offset);
    throw wholeFileIssue(
      file,
      `uses YAML aliases (*${expansion.alias}) that expand to more than ${MAX_ALIAS_EXPANSION} values ` +
        `beyond those written; write the repeated blocks out, or use fewer levels of aliases`,
      line,
      col,
    );
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: -1 });
  } catch (error) {
    // The message, not the stack: the parser's own wording names no value of the file.
    throw wholeFileIssue(file, `cannot be read as YAML data: ${(error as Error).message.split('\n')[0]}`);
  }
  return { data, doc, lineCounter };
}

/**
 * Parses and validates a job spec from its text. `file` names it in messages and fixes
 * the job name (its base name). Throws JobSpecError listing every issue.
 */
export function parseJobSpec(text: string, file: string): JobSpec {
  const { data, doc, lineCounter } = readJobSpecYaml(text, file);
  try {
    return validateJobSpec(data, doc, lineCounter, file);
  } catch (error) {
    if (error instanceof JobSpecError) throw error;
    // A validator that broke on odd data (a stack overflow on deep nesting) still names the file.
    throw wholeFileIssue(file, `cannot be checked: ${(error as Error).message.split('\n')[0]}`);
  }
}

function validateJobSpec(
  data: unknown,
  doc: Document.Parsed,
  lineCounter: LineCounter,
  file: string,
): JobSpec {
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
  return parseJobSpec(await readJobSpecText(file), file);
}

/**
 * The text of a job spec file, its size checked before it is read (a 2 GB file is not
 * read into memory to be refused). Throws JobSpecError naming the file.
 */
export async function readJobSpecText(file: string): Promise<string> {
  let text: string;
  try {
    const info = await stat(file);
    if (info.isFile() && info.size > MAX_JOB_SPEC_BYTES) throw tooLarge(file, info.size);
    text = await readFile(file, 'utf8');
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String((error as Error).message);
    if (error instanceof JobSpecError) throw error;
    throw new JobSpecError(file, [{ file, path: '', message: `cannot be read: ${reason}` }], {
      cause: error,
    });
  }
  return text;
}
