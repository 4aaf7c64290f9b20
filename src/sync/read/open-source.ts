import path from 'node:path';
import type { PlatformClient } from '../../api/create-platform-client.ts';
import type { Logger } from '../../ground/logger.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import type { SourceRecord } from '../model/types.ts';
import { createSource } from '../sources/create-source.ts';
import type { ReadWorksheetRows, SourceDeps } from '../sources/source-deps.ts';
import type { SourceLimits } from '../sources/source-rate-limit.ts';
import type { DeadLetterStore } from '../state/dead-letter-store.ts';
import type { RunStore } from '../state/run-store.ts';
import { deadLetterSource } from './dead-letter-source.ts';
import type { ReadByIds } from './dead-letter-source.ts';
import { prepassFileSource } from './file-prepass.ts';
import { checkSourceColumns } from './source-columns.ts';

/** What opening a job's source reads and reads through. */
export interface OpenSourceDeps {
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** The job's saved incremental cursor. */
  runs: Pick<RunStore, 'getCursor'>;
  /** The entries a replay reads. */
  deadLetters: DeadLetterStore;
  /** The `source.rateLimit` of each job, shared through Redis with every worker. */
  sourceLimits: SourceLimits;
  /** The platform client of a credentials prefix: a worksheet source's organisation zone. */
  clientFor(credentialsEnvPrefix?: string): PlatformClient;
  /** Reads a worksheet source's rows (sync/pull/read-worksheet-rows.ts, wired by the CLI). */
  readWorksheetRows: ReadWorksheetRows;
}

/** What a run reads besides its spec: a replay's dead letters, a singer chunk, how to start. */
export interface SourceReadOptions {
  /** Dead letters to replay instead of reading the source. */
  replayIds?: string[] | undefined;
  /** A singer source: the local file `rowbridge singer` staged this run's records in. */
  singerChunk?: string | undefined;
  /** Read from the beginning, past no saved cursor (a pull that starts over). */
  fromStart?: boolean;
  /** How a worksheet source writes multi-value fields (a Postgres pull: as arrays). */
  lists?: 'joined' | 'array';
  /**
   * When the run's read first began (ISO): a read resumed after a crash skips what its
   * first attempt wrote, so its cursor may not pass that start. @defaultValue now
   */
  readStartedAt?: string | undefined;
}

/** The zone of the platform a worksheet source reads from (undefined for other sources). */
function platformZone(rt: Pick<OpenSourceDeps, 'clientFor'>, spec: JobSpec): string | undefined {
  if (spec.source.type !== 'worksheet') return undefined;
  return rt.clientFor(spec.source.credentialsEnvPrefix).organisation.timeZone;
}

/** The job's shared `source.rateLimit` (one Bottleneck per job in Redis), when it has one. */
function sourceGate(rt: Pick<OpenSourceDeps, 'sourceLimits'>, spec: JobSpec): SourceDeps['sourceGate'] {
  const source = spec.source;
  if (source.type !== 'http' && source.type !== 'postgres' && source.type !== 'mysql') return undefined;
  if (source.rateLimit === undefined) return undefined;
  return rt.sourceLimits.gate(spec.name, source.type, source.rateLimit);
}

/**
 * How a replay reads rows again by their source id, for sources that can (SQL with a
 * keyColumn, worksheets); undefined for the others (files, http), which replay the
 * stored record.
 */
export function readByIds(
  rt: OpenSourceDeps,
  spec: JobSpec,
  file: string,
  signal?: AbortSignal,
): ReadByIds | undefined {
  const source = spec.source;
  const byId =
    source.type === 'worksheet' ||
    ((source.type === 'postgres' || source.type === 'mysql') && source.keyColumn !== undefined);
  if (!byId) return undefined;
  return (ids) =>
    createSource(source, {
      env: rt.env,
      baseDir: path.dirname(file),
      readWorksheetRows: rt.readWorksheetRows,
      platformTimeZone: platformZone(rt, spec),
      ids,
      signal,
      sourceGate: sourceGate(rt, spec),
    });
}

/**
 * The records of a run: the dead letters it replays, or the job's source read past
 * the saved incremental cursor (worksheet sources read through the platform client of
 * their credentials). `signal` (BullMQ's, of a worker that is stopping) cancels the read:
 * requests and queries in flight, and between records.
 */
export async function openSource(
  rt: OpenSourceDeps,
  spec: JobSpec,
  file: string,
  data: SourceReadOptions,
  runId: string,
  range?: { since: string; sinceInclusive: boolean; until: string },
  signal?: AbortSignal,
): Promise<AsyncIterable<SourceRecord>> {
  if (data.replayIds !== undefined)
    return deadLetterSource(rt.deadLetters, data.replayIds, runId, readByIds(rt, spec, file, signal));
  if (range !== undefined) {
    return checkSourceColumns(
      spec.name,
      spec.source,
      spec.mappings,
      createSource(spec.source, {
        env: rt.env,
        baseDir: path.dirname(file),
        readWorksheetRows: rt.readWorksheetRows,
        platformTimeZone: platformZone(rt, spec),
        worksheetLists: data.lists,
        cursorField: spec.incremental?.cursor,
        ...range,
        signal,
        sourceGate: sourceGate(rt, spec),
      }),
    );
  }
  const saved =
    spec.incremental === undefined || data.fromStart === true
      ? undefined
      : await rt.runs.getCursor(spec.name);
  // Rows can arrive after a run with the very cursor value it saved (same timestamp).
  // Upsert and update re-read the rows at the saved cursor: the ones already written are
  // unchanged and cost no request, the late ones land. Append would write them twice.
  const mode = spec.target?.mode;
  const sinceInclusive = saved !== undefined && (mode === 'upsert' || mode === 'update');
  // A worksheet scan may miss a row edited while it ran (worksheet-source.ts): where a row
  // read twice writes nothing (by key: upsert, update, mirror, an incremental pull's sink)
  // the cursor stops at the scan's start. Append would write the rows read again twice:
  // it keeps the largest cursor read, and the race (docs/writing-jobs.md).
  const capCursorAtScanStart =
    mode === 'upsert' || mode === 'update' || mode === 'mirror' || spec.sink !== undefined;
  const deps: SourceDeps = {
    env: rt.env,
    baseDir: path.dirname(file),
    readWorksheetRows: rt.readWorksheetRows,
    platformTimeZone: platformZone(rt, spec),
    worksheetLists: data.lists,
    ...(saved === undefined ? {} : { since: JSON.parse(saved) as unknown, sinceInclusive }),
    capCursorAtScanStart,
    ...(data.readStartedAt === undefined ? {} : { scanStartedAt: Date.parse(data.readStartedAt) }),
    cursorField: spec.incremental?.cursor,
    signal,
    sourceGate: sourceGate(rt, spec),
    singerChunk: data.singerChunk,
  };
  // The singer command checked the tap's SCHEMA against the mapping before staging any
  // record; a chunk's first records may leave out optional properties the schema has.
  if (spec.source.type === 'singer') return createSource(spec.source, deps);
  // A file is read through once before the first write: a broken line fails the run
  // with nothing written, instead of after the rows above it landed.
  const prepass = await prepassFileSource(spec.source, deps);
  if (prepass?.records === 0)
    rt.logger.warn({ job: spec.name }, `the ${spec.source.type} source holds no records: nothing to write`);
  // The reader gets the path the pre-pass resolved and read, not the spec's to resolve again.
  return checkSourceColumns(
    spec.name,
    spec.source,
    spec.mappings,
    createSource(prepass?.spec ?? spec.source, deps),
  );
}
