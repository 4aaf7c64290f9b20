import { ConfigError } from '../../ground/errors.ts';

/** One thing wrong with a job's field mapping, found before any row is read. */
export interface MappingProblem {
  /** The mapping's target as the job spec wrote it (or the key option, or a required field). */
  target: string;
  /** What is wrong and what is allowed. */
  message: string;
}

/**
 * The field mapping does not fit the worksheet structure. Carries every problem at
 * once so a user fixes the job spec in one pass. A config error: the run stops before
 * any write.
 */
export class MappingError extends ConfigError {
  override name = 'MappingError';
  readonly problems: readonly MappingProblem[];
  readonly jobFile: string | undefined;

  constructor(
    problems: readonly MappingProblem[],
    context: { worksheet: string; jobFile?: string | undefined },
  ) {
    const where = context.jobFile === undefined ? '' : `${context.jobFile}: `;
    const lines = problems.map((p) => `  - ${p.target}: ${p.message}`);
    super(
      `${where}field mapping does not fit worksheet ${context.worksheet} ` +
        `(${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${lines.join('\n')}`,
    );
    this.problems = problems;
    this.jobFile = context.jobFile;
  }
}
