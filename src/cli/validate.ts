/**
 * `rowbridge validate JOB...`: checks job spec files, the environment variables they name
 * and a file source's columns, without connecting to anything.
 * JOB is a path, or a bare name looked up in the jobs folder (ROWBRIDGE_JOBS_DIR, else ./jobs).
 * Exit 0 when every job is valid, 1 when any is not (each issue printed), 64 on misuse.
 */
import { isAbsolute, relative, resolve } from 'node:path';
import { nextFireTimes, scheduleOf } from '../sync/job-spec/schedule-schema.ts';
import type { ScheduleSpec } from '../sync/job-spec/schedule-schema.ts';
import { readSetting } from '../../config/settings.ts';
import type { JobSpecIssue } from '../sync/job-spec/job-spec-error.ts';
import { JobSpecError, formatJobSpecIssue } from '../sync/job-spec/job-spec-error.ts';
import type { JobSpec } from '../sync/job-spec/job-spec-schema.ts';
import { parseJobSpec, readJobSpecText } from '../sync/job-spec/load-job-spec.ts';
import { environmentProblems, fileColumnProblems } from '../sync/check/job-environment.ts';
import { defineCommand, parseCommand } from './command.ts';
import { jobFileIn } from './job-file.ts';
import type { CliIo } from './io.ts';
import { EXIT } from './io.ts';

const VALIDATE = defineCommand({
  name: 'validate',
  usage: ['validate [--json] JOB...'],
  description:
    "Checks job specs, the environment variables they name and a file source's columns,\n" +
    'without connecting to anything. JOB is a job file (jobs/orders.yaml) or a job name\n' +
    '(orders = orders.yaml in ROWBRIDGE_JOBS_DIR, else ./jobs). Exit 0 every job valid, 1 any\n' +
    'is not, 64 misuse.',
  options: {
    json: {
      type: 'boolean',
      help: 'print {"valid": boolean, "issues": [{file, path, line, column, message}]}',
    },
  },
  positionals: { min: 1, max: Infinity, label: 'job' },
});

type Outcome = { file: string; spec: JobSpec } | { file: string; issues: JobSpecIssue[] };

/**
 * A bare name has no folder and no extension: the user means the job of that name in the
 * jobs folder (ROWBRIDGE_JOBS_DIR, else ./jobs), NAME.yaml or NAME.yml, as `run` does.
 */
function jobPath(arg: string, cwd: string, env: NodeJS.ProcessEnv): string {
  const bare = !/[\\/]/.test(arg) && !/\.ya?ml$/i.test(arg) && arg !== '.' && arg !== '..';
  if (!bare) return resolve(cwd, arg);
  return jobFileIn(resolve(cwd, readSetting('jobsDir', env) ?? 'jobs'), arg);
}

/** Paths under the working directory are shown relative, as the user typed them. */
function displayPath(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? file : rel;
}

async function check(arg: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Outcome> {
  const path = jobPath(arg, cwd, env);
  const file = displayPath(path, cwd);
  let text: string;
  try {
    // Size checked before reading: a 2 GB "spec" is refused, not read.
    text = await readJobSpecText(path);
  } catch (error) {
    if (error instanceof JobSpecError) return { file, issues: error.issues.map((i) => ({ ...i, file })) };
    throw error;
  }
  let spec: JobSpec;
  try {
    spec = parseJobSpec(text, file);
  } catch (error) {
    if (error instanceof JobSpecError) return { file, issues: error.issues };
    throw error;
  }
  // Beyond the text: the variables the job names, and a file source's columns.
  const found = [...environmentProblems(spec, env), ...(await fileColumnProblems(spec, path, env))];
  return found.length === 0 ? { file, spec } : { file, issues: found.map((p) => ({ file, ...p })) };
}

/** `schedule "0 3 * * *" fires next at ... (Europe/Berlin)`: the next three times, in the schedule's zone. */
function firesAt(schedule: ScheduleSpec): string {
  const { zone, times } = nextFireTimes(schedule, 3);
  const format = new Intl.DateTimeFormat('sv-SE', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  const { pattern } = scheduleOf(schedule);
  return `schedule "${pattern}" fires next at ${times.map((t) => format.format(t)).join(', ')} (${zone})`;
}

function summary(spec: JobSpec): string {
  if (spec.target !== undefined) {
    return `${spec.name}: ${spec.source.type} → ${spec.target.worksheet}, ${spec.target.mode}`;
  }
  const worksheet = spec.source.type === 'worksheet' ? spec.source.worksheet : spec.source.type;
  const sink =
    spec.sink === undefined
      ? ''
      : spec.sink.type === 'postgres'
        ? `postgres ${spec.sink.table}`
        : `${spec.sink.type} ${spec.sink.path}`;
  return `${spec.name}: ${worksheet} → ${sink}, pull`;
}

export async function main(args: string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(VALIDATE, args, io);
  if (typeof parsed === 'number') return parsed;
  const json = parsed.values.json === true;
  const jobs = parsed.positionals;

  const outcomes: Outcome[] = [];
  for (const job of jobs) outcomes.push(await check(job, io.cwd, io.env));
  const issues = outcomes.flatMap((outcome) => ('issues' in outcome ? outcome.issues : []));

  if (json) {
    io.out(JSON.stringify({ valid: issues.length === 0, issues }, null, 2));
  } else {
    for (const outcome of outcomes) {
      if ('spec' in outcome) {
        io.out(`ok: ${outcome.file} (${summary(outcome.spec)})`);
        if (outcome.spec.schedule !== undefined) io.out(`  ${firesAt(outcome.spec.schedule)}`);
      } else io.err(outcome.issues.map(formatJobSpecIssue).join('\n'));
    }
  }
  return issues.length === 0 ? EXIT.ok : EXIT.failure;
}
