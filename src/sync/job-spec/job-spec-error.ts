import { RowbridgeError } from '../../ground/errors.ts';
/** One problem found in a job spec file. */
export interface JobSpecIssue {
  /** The job file as the caller named it. */
  file: string;
  /** Dotted path in the document, e.g. `target.mode` or `fields["Order No"].from`; "" for the whole document. */
  path: string;
  /** 1-based line of the offending node (or of its nearest existing parent), when known. */
  line?: number;
  /** 1-based column, when known. */
  column?: number;
  /** What is wrong and what is allowed, e.g. `must be one of append, upsert; got "upsrt"`. */
  message: string;
  /** The lines around a syntax error with a caret under it (secrets masked), printed after the message. */
  frame?: string;
}

/** Renders an issue as `file:line:col path: message`, the form editors and terminals link. */
export function formatJobSpecIssue(issue: JobSpecIssue): string {
  const where = issue.line === undefined ? issue.file : `${issue.file}:${issue.line}:${issue.column ?? 1}`;
  const text = issue.path === '' ? `${where} ${issue.message}` : `${where} ${issue.path}: ${issue.message}`;
  return issue.frame === undefined ? text : `${text}\n${issue.frame}`;
}

/** A job spec that cannot be used, with every issue found in one pass. */
export class JobSpecError extends RowbridgeError {
  override readonly name = 'JobSpecError';
  override readonly code = 'JOB_SPEC_INVALID';
  override readonly category = 'config';
  readonly file: string;
  readonly issues: JobSpecIssue[];

  constructor(file: string, issues: JobSpecIssue[], options?: ErrorOptions) {
    super(issues.map(formatJobSpecIssue).join('\n'), options);
    this.file = file;
    this.issues = issues;
  }
}
