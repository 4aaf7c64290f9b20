/**
 * The postgres-cdc jobs of a jobs folder that capture the table a two-way job writes:
 * `check JOB` of the two-way job says whether their streams will drop its writes (the
 * same `origin:` on both, docs/cdc.md) or write each one back to the worksheet (echo).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadJobSpec } from '../job-spec/load-job-spec.ts';

/** A postgres-cdc job capturing the table, and the origin its stream drops (if any). */
export interface CapturingJob {
  name: string;
  origin: string | undefined;
}

/** `orders` and `public.orders` name the same table; PostgreSQL folds unquoted names. */
function tableName(table: string): string {
  return (table.includes('.') ? table : `public.${table}`).toLowerCase();
}

/** Where a URL points (host, port, database), to tell two servers' same-named tables apart. */
function database(url: string | undefined): string | undefined {
  if (url === undefined || url === '') return undefined;
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return undefined;
  }
}

/**
 * The postgres-cdc jobs in `jobsDir` (other than `self`) capturing `table` on the server
 * `urlEnv` points to; a job whose server cannot be told counts when the names match.
 */
export async function capturingJobs(
  jobsDir: string,
  self: string,
  target: { table: string; urlEnv: string },
  env: NodeJS.ProcessEnv,
): Promise<CapturingJob[]> {
  const files = (await readdir(jobsDir).catch(() => [] as string[])).filter((f) => /\.ya?ml$/.test(f));
  const found: CapturingJob[] = [];
  const here = database(env[target.urlEnv]);
  for (const file of files) {
    const full = path.join(jobsDir, file);
    // Only a file that says postgres-cdc can be one: the others are not parsed.
    if (!(await readFile(full, 'utf8').catch(() => '')).includes('postgres-cdc')) continue;
    const spec = await loadJobSpec(full).catch(() => undefined);
    if (spec === undefined || spec.name === self || spec.source.type !== 'postgres-cdc') continue;
    if (tableName(spec.source.table) !== tableName(target.table)) continue;
    const there = database(env[spec.source.urlEnv]);
    if (here !== undefined && there !== undefined && here !== there) continue;
    found.push({ name: spec.name, origin: spec.source.origin });
  }
  return found;
}
