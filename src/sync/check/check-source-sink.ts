/**
 * `rowbridge check JOB`, the job's other end: its source (a push) or sink (a pull) is
 * reached the way a run reaches it and looked at without a write: a database's table
 * and the columns the job names, a file's presence and its columns, a sink's folder or
 * table. A step per thing checked; a failed one says why and what was meant.
 */
import { access, constants, stat } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { CheckStep } from './check-setup.ts';
import { checkCdcSource } from './check-cdc-source.ts';
import { closestName } from '../sources/closest-name.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import { COLUMN_SAMPLE, columnSample } from '../read/source-columns.ts';
import { createSource } from '../sources/create-source.ts';
import { requireEnvUrl } from '../sources/env-refs.ts';
import { resolveDataFile } from '../sources/file-input.ts';
import { redactSecrets, urlSecrets } from '../sources/redact.ts';
import type { SourceSpec } from '../sources/source-spec.ts';
import type { PostgresSinkSpec, SinkSpec } from '../sinks/sink-spec.ts';

/** Where the job file is and the environment its names are read from. */
export interface CheckEnds {
  env: NodeJS.ProcessEnv;
  /** Folder of the job file. */
  baseDir: string;
}

/** Sources whose every record has the same columns: one record, or a header, tells them all. */
const FIXED = new Set(['csv', 'postgres', 'mysql']);

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The columns the job reads from its source, each with what names it. */
function namedColumns(spec: JobSpec): Array<{ column: string; by: string }> {
  const out: Array<{ column: string; by: string }> = [];
  const source = spec.source as SourceSpec & Record<string, unknown>;
  for (const key of ['cursorColumn', 'keyColumn', 'updatedAtColumn'] as const) {
    const value = source[key];
    if (typeof value === 'string' && value !== '') out.push({ column: value, by: `source.${key}` });
  }
  // A SQL source's cursorColumn is also its incremental cursor (job-spec-schema.ts): one column.
  const { incremental } = spec;
  if (incremental !== undefined && !out.some((c) => c.column === incremental.cursor))
    out.push({ column: incremental.cursor, by: 'incremental.cursor' });
  for (const m of spec.mappings)
    if (m.from !== undefined && !('default' in m && !FIXED.has(spec.source.type)))
      out.push({ column: m.from, by: `fields.${m.target}` });
  return out;
}

/** A step for the named columns against `columns`: each missing one with the nearest name. */
function columnsStep(what: string, spec: JobSpec, columns: readonly string[]): CheckStep {
  const have = new Set(columns);
  const missing = namedColumns(spec).filter((n) => !have.has(n.column));
  if (missing.length === 0) {
    return {
      name: 'source columns',
      ok: true,
      detail: `${what} has the ${namedColumns(spec).length} columns the job names (of ${columns.length})`,
    };
  }
  const shown = columns.slice(0, 20).join(', ') + (columns.length > 20 ? ', ...' : '');
  return {
    name: 'source columns',
    ok: false,
    detail:
      missing
        .map((m) => {
          const hint = closestName(m.column, columns);
          return `${what} has no column ${m.column} (${m.by}${hint === undefined ? '' : `; did you mean ${hint}?`})`;
        })
        .join('; ') + `; its columns: ${shown}`,
  };
}

async function checkSqlSource(spec: JobSpec, ends: CheckEnds): Promise<CheckStep[]> {
  const source = spec.source;
  if (source.type !== 'postgres' && source.type !== 'mysql') return [];
  const what =
    source.table === undefined ? `the ${source.type} source query` : `source table ${source.table}`;
  let columns: string[];
  try {
    columns =
      source.type === 'postgres'
        ? await (await import('../sources/postgres-source.ts')).postgresSourceColumns(source, ends)
        : await (
            await import('../sources/mysql-source.ts')
          ).mysqlSourceColumns(source, ends, spec.target?.mode === 'two-way');
  } catch (err) {
    return [{ name: 'source', ok: false, detail: messageOf(err) }];
  }
  const privileged =
    source.allowPrivilegedSource === true ? ', allowPrivilegedSource: true' : ', a read-only login';
  return [
    {
      name: 'source',
      ok: true,
      detail: `${source.type} (${source.urlEnv}) reached${privileged}; ${what} read`,
    },
    columnsStep(what, spec, columns),
  ];
}

/** Files and http: the first records (or the header of a file whose records are all bad). */
async function checkRecordSource(spec: JobSpec, ends: CheckEnds): Promise<CheckStep[]> {
  const source = spec.source;
  const what =
    'path' in source && typeof source.path === 'string'
      ? `${source.type} source ${source.path}`
      : `${source.type} source`;
  const samples: Array<Record<string, unknown>> = [];
  let read = 0;
  try {
    if ('path' in source && typeof source.path === 'string') {
      const file = await resolveDataFile(source.path, ends.baseDir, ends.env, 'source.path');
      await access(file, constants.R_OK);
    }
    for await (const item of createSource(source, { env: ends.env, baseDir: ends.baseDir })) {
      read += 1;
      const sample = columnSample(item);
      if (sample !== undefined) samples.push(sample);
      if (read >= COLUMN_SAMPLE) break;
    }
  } catch (err) {
    return [{ name: 'source', ok: false, detail: messageOf(err) }];
  }
  const steps: CheckStep[] = [
    { name: 'source', ok: true, detail: `${what}: read the first ${read} record${read === 1 ? '' : 's'}` },
  ];
  if (samples.length === 0) {
    steps.push({ name: 'source columns', ok: true, detail: `not checked: ${what} has no records yet` });
    return steps;
  }
  const columns = new Set<string>();
  for (const sample of FIXED.has(source.type) ? samples.slice(0, 1) : samples)
    for (const key of Object.keys(sample)) columns.add(key);
  steps.push(columnsStep(what, spec, [...columns]));
  return steps;
}

async function checkFileSink(sink: SinkSpec & { path: string }, ends: CheckEnds): Promise<CheckStep> {
  try {
    const file = await resolveDataFile(sink.path, ends.baseDir, ends.env, 'sink.path');
    const dir = path.dirname(file);
    const folder = await stat(dir).catch(() => undefined);
    if (folder?.isDirectory() !== true)
      return { name: 'sink', ok: false, detail: `${sink.type} sink ${sink.path}: no folder ${dir}` };
    await access(dir, constants.W_OK).catch(() => {
      throw new Error(`${sink.type} sink ${sink.path}: the folder ${dir} is not writable by this user`);
    });
    const existing = await stat(file).catch(() => undefined);
    if (existing === undefined)
      return {
        name: 'sink',
        ok: true,
        detail: `${sink.type} sink ${sink.path}: folder writable, the first run creates the file`,
      };
    await access(file, constants.W_OK | constants.R_OK).catch(() => {
      throw new Error(`${sink.type} sink ${sink.path}: the file is not readable and writable by this user`);
    });
    return {
      name: 'sink',
      ok: true,
      detail: `${sink.type} sink ${sink.path}: the file is there and writable`,
    };
  } catch (err) {
    return { name: 'sink', ok: false, detail: messageOf(err) };
  }
}

/** A postgres sink's table and the columns the job writes, read from the catalogue only. */
async function checkPostgresSink(sink: PostgresSinkSpec, spec: JobSpec, ends: CheckEnds): Promise<CheckStep> {
  const who = `postgres sink (${sink.urlEnv})`;
  let secrets: string[] = [];
  try {
    const url = requireEnvUrl(ends.env, sink.urlEnv, 'postgres sink');
    secrets = urlSecrets(url);
    const db = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
    db.on('error', () => undefined);
    try {
      await db.connect();
      const table = sink.table
        .split('.')
        .map((part) => `"${part.replaceAll('"', '""')}"`)
        .join('.');
      const { rows } = await db.query<{ name: string }>(
        `SELECT attname AS name FROM pg_attribute
          WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
        [table],
      );
      const columns = rows.map((r) => r.name);
      if (columns.length === 0) {
        return sink.createTable === true
          ? {
              name: 'sink',
              ok: true,
              detail: `${who} reached; table ${sink.table} is created by the first run (createTable)`,
            }
          : {
              name: 'sink',
              ok: false,
              detail: `${who}: table ${sink.table} does not exist; create it or set createTable: true`,
            };
      }
      const wanted = [...new Set([sink.key, ...spec.mappings.map((m) => m.target)])];
      const missing = wanted.filter((c) => !columns.includes(c));
      if (missing.length === 0 || sink.createTable === true) {
        const added = missing.length === 0 ? '' : `; the first run adds ${missing.join(', ')} (createTable)`;
        return {
          name: 'sink',
          ok: true,
          detail: `${who} reached; table ${sink.table} has the ${wanted.length - missing.length} columns the job writes${added}`,
        };
      }
      return {
        name: 'sink',
        ok: false,
        detail:
          missing
            .map((c) => {
              const hint = closestName(c, columns);
              return `sink table ${sink.table} has no column ${c}${hint === undefined ? '' : ` (did you mean ${hint}?)`}`;
            })
            .join('; ') + `; its columns: ${columns.join(', ')}`,
      };
    } finally {
      await db.end().catch(() => undefined);
    }
  } catch (err) {
    return { name: 'sink', ok: false, detail: `${who}: ${redactSecrets(messageOf(err), secrets)}` };
  }
}

/** The steps for the job's source (push) or sink (pull); none for a worksheet source's read (check-setup does it). */
export async function checkSourceAndSink(spec: JobSpec, ends: CheckEnds): Promise<CheckStep[]> {
  const steps: CheckStep[] = [];
  const type: string = spec.source.type;
  if (type === 'postgres' || type === 'mysql') steps.push(...(await checkSqlSource(spec, ends)));
  else if (['csv', 'ndjson', 'json', 'http'].includes(type))
    steps.push(...(await checkRecordSource(spec, ends)));
  else if (type === 'postgres-cdc') steps.push(...(await checkCdcSource(spec, ends.env)));
  else if (type !== 'worksheet')
    steps.push({ name: 'source', ok: true, detail: `not checked: check does not read a ${type} source` });
  const sink = spec.sink as SinkSpec | undefined;
  if (sink?.type === 'postgres') steps.push(await checkPostgresSink(sink, spec, ends));
  else if (sink !== undefined) steps.push(await checkFileSink(sink, ends));
  return steps;
}
