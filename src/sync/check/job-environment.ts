/**
 * What `validate` can check beyond the spec's own text: the environment variables the job
 * names, and, for file sources, that the file has every column the mapping reads. A run
 * would fail on them anyway, but only after a queue, a lock and a retry or three.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { credentialsFromEnv } from '../../api/credentials-from-env.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import { COLUMN_SAMPLE, columnSample, missingColumnsError } from '../read/source-columns.ts';
import { createSource } from '../sources/create-source.ts';
import { envRefRefusal, envRefs, isEnvRefAllowed } from '../sources/env-refs.ts';
import type { EnvRef } from '../sources/env-refs.ts';
import { resolveDataFile } from '../sources/file-input.ts';
import { readSecretFile } from '../sources/secret-file.ts';

/** One thing `validate` found outside the spec text: where (a spec path) and what. */
export interface EnvironmentProblem {
  path: string;
  message: string;
}

function unset(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = env[name];
  return value === undefined || value.trim() === '';
}

/** Every `${NAME}` and `${file:PATH}` in a part of the spec, with the path of the string it is in. */
function references(value: unknown, at: string, out: Array<{ path: string } & EnvRef>): void {
  if (typeof value === 'string') {
    for (const ref of envRefs(value)) out.push({ path: at, ...ref });
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => references(item, `${at}[${i}]`, out));
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) references(item, at === '' ? key : `${at}.${key}`, out);
  }
}

/**
 * The `${NAME}` references of the job's source that a run would refuse (not listed in
 * ROWBRIDGE_SOURCE_ENV_ALLOW), so `validate` and `check` say so before a run does.
 */
export function refusedEnvRefs(spec: JobSpec, env: NodeJS.ProcessEnv): EnvironmentProblem[] {
  const refs: Array<{ path: string } & EnvRef> = [];
  references(spec.source, 'source', refs);
  return refs.flatMap((ref) =>
    ref.kind === 'env' && !isEnvRefAllowed(ref.name, env)
      ? [{ path: ref.path, message: envRefRefusal(ref.name) }]
      : [],
  );
}

/** Variables the job names that are not set or may not be read: urlEnv, `${NAME}` references, credential prefixes. */
export function environmentProblems(spec: JobSpec, env: NodeJS.ProcessEnv): EnvironmentProblem[] {
  const problems: EnvironmentProblem[] = [];
  for (const [at, part] of [
    ['source', spec.source],
    ['sink', spec.sink],
  ] as const) {
    if (
      part !== undefined &&
      'urlEnv' in part &&
      typeof part.urlEnv === 'string' &&
      unset(env, part.urlEnv)
    ) {
      problems.push({
        path: `${at}.urlEnv`,
        message: `names ${part.urlEnv}, but that environment variable is not set`,
      });
    }
  }
  const refs: Array<{ path: string } & EnvRef> = [];
  references(spec.source, 'source', refs);
  for (const ref of refs) {
    if (ref.kind === 'file') {
      try {
        // Read to check, then dropped: what it holds is never kept or shown.
        readSecretFile(ref.path, env, ref.path === '' ? 'source' : ref.path);
      } catch (err) {
        problems.push({ path: ref.path, message: (err as Error).message });
      }
    } else if (!isEnvRefAllowed(ref.name, env)) {
      problems.push({ path: ref.path, message: envRefRefusal(ref.name) });
    } else if (unset(env, ref.name)) {
      problems.push({
        path: ref.path,
        message: `refers to \${${ref.name}}, but the environment variable ${ref.name} is not set`,
      });
    }
  }
  const prefixes: Array<[string, string | undefined]> = [
    ['target.app.credentialsEnvPrefix', spec.target?.app?.credentialsEnvPrefix],
    [
      'source.credentialsEnvPrefix',
      spec.source.type === 'worksheet' ? spec.source.credentialsEnvPrefix : undefined,
    ],
  ];
  for (const [at, prefix] of prefixes) {
    if (prefix === undefined) continue;
    try {
      credentialsFromEnv(env, prefix);
    } catch (err) {
      problems.push({ path: at, message: (err as Error).message });
    }
  }
  return problems;
}

/**
 * For csv, ndjson and json sources whose file is there: reads its first records and
 * names every mapped column it lacks. Other sources are checked by `run` before its
 * first write.
 */
export async function fileColumnProblems(
  spec: JobSpec,
  jobFile: string,
  env: NodeJS.ProcessEnv,
): Promise<EnvironmentProblem[]> {
  const source = spec.source;
  if (source.type !== 'csv' && source.type !== 'ndjson' && source.type !== 'json') return [];
  // The file the reader would read (under ROWBRIDGE_DATA_DIR when set), not one beside the job.
  let file: string;
  try {
    file = await resolveDataFile(source.path, path.dirname(jobFile), env, 'source.path');
  } catch (err) {
    return [{ path: 'source.path', message: (err as Error).message }];
  }
  // A file that is not there yet (delivered before each run) is the run's to find.
  if (!existsSync(file)) return [];
  const samples: Array<Record<string, unknown>> = [];
  try {
    for await (const item of createSource(
      { ...source, path: file },
      { env, baseDir: path.dirname(jobFile) },
    )) {
      const sample = columnSample(item);
      if (sample !== undefined) samples.push(sample);
      if (samples.length >= COLUMN_SAMPLE) break;
    }
  } catch (err) {
    return [{ path: 'source.path', message: (err as Error).message }];
  }
  const problem = missingColumnsError(spec.name, source, spec.mappings, samples);
  return problem === undefined ? [] : [{ path: 'fields', message: problem.message }];
}
