/**
 * The one entry point of the sources: picks the reader for a job's `source:` spec. Every
 * reader is an async generator, so records are pulled one at a time and a consumer that
 * stops early (break, throw) closes the file, connection or request behind it.
 */
import type { SourceSpec } from './source-spec.ts';
import type { SourceDeps } from './source-deps.ts';
import type { SourceItem } from './source-error.ts';
import { readSetting } from '../../../config/settings.ts';
import { withRecordChunks } from './record-chunks.ts';
import { readCsvChunks, readCsvSource } from './csv-source.ts';
import { resolveDataFile } from './file-input.ts';
import { readHttpSource } from './http-source.ts';
import { readJsonSource } from './json-source.ts';
import { readNdjsonSource } from './ndjson-source.ts';
import { readSingerChunk } from './singer-source.ts';
import { readWorksheetSource } from './worksheet-source.ts';

/**
 * A file source confined to ROWBRIDGE_DATA_DIR: the path is checked (and symlinks
 * resolved) before the reader opens it. Without the setting the reader gets the spec as
 * written, so its messages keep the path the job spec wrote.
 */
async function* confined<S extends { path: string }, T>(
  spec: S,
  deps: SourceDeps,
  read: (spec: S, deps: SourceDeps) => AsyncGenerator<T>,
): AsyncGenerator<T> {
  const path = await resolveDataFile(spec.path, deps.baseDir, deps.env, 'source.path');
  yield* read({ ...spec, path }, deps);
}

/**
 * Creates the record stream of a source. Items with `error` set are records that could
 * not be parsed (dead-letter them and go on); a thrown `SourceError` ends the read.
 */
export function createSource(spec: SourceSpec, deps: SourceDeps): AsyncGenerator<SourceItem> {
  const dataDir = readSetting('dataDir', deps.env) !== undefined;
  switch (spec.type) {
    case 'csv':
      // Records a chunk at a time too (record-chunks.ts), for the engine's own reader.
      return dataDir
        ? withRecordChunks(() => confined(spec, deps, readCsvChunks), deps.signal)
        : readCsvSource(spec, deps);
    case 'ndjson':
      return dataDir ? confined(spec, deps, readNdjsonSource) : readNdjsonSource(spec, deps);
    case 'json':
      return dataDir ? confined(spec, deps, readJsonSource) : readJsonSource(spec, deps);
    case 'http':
      return readHttpSource(spec, deps);
    // The database drivers load only for a job that reads a database: a worker's start
    // does not pay for pg and mysql2 (bench/README.md, memory at start).
    case 'postgres':
      return lazily(async () => (await import('./postgres-source.ts')).readPostgresSource(spec, deps));
    case 'mysql':
      return lazily(async () => (await import('./mysql-source.ts')).readMysqlSource(spec, deps));
    // Outside the stream (plan, check, a sample) the table is read as it is now.
    case 'postgres-cdc':
      return lazily(async () =>
        (await import('./postgres-source.ts')).readPostgresSource(
          {
            type: 'postgres',
            urlEnv: spec.urlEnv,
            table: spec.table,
            keyColumn: spec.keyColumn,
            cursorColumn: spec.keyColumn,
            ...(spec.batchSize === undefined ? {} : { batchSize: spec.batchSize }),
            ...(spec.allowPrivilegedSource === undefined
              ? {}
              : { allowPrivilegedSource: spec.allowPrivilegedSource }),
          },
          deps,
        ),
      );
    case 'worksheet':
      return readWorksheetSource(spec, deps);
    case 'singer':
      return readSingerChunk(spec, deps);
  }
}

/** A source whose reader module is imported on the first read. */
async function* lazily(open: () => Promise<AsyncGenerator<SourceItem>>): AsyncGenerator<SourceItem> {
  yield* await open();
}
