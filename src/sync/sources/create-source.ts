/**
 * The one entry point of the sources: picks the reader for a job's `source:` spec. Every
 * reader is an async generator, so records are pulled one at a time and a consumer that
 * stops early (break, throw) closes the file, connection or request behind it.
 */
import type { SourceSpec } from './source-spec.ts';
import type { SourceDeps } from './source-deps.ts';
import type { SourceItem } from './source-error.ts';
import { readCsvSource } from './csv-source.ts';
import { readHttpSource } from './http-source.ts';
import { readJsonSource } from './json-source.ts';
import { readMysqlSource } from './mysql-source.ts';
import { readNdjsonSource } from './ndjson-source.ts';
import { readPostgresSource } from './postgres-source.ts';
import { readWorksheetSource } from './worksheet-source.ts';

/**
 * Creates the record stream of a source. Items with `error` set are records that could
 * not be parsed (dead-letter them and go on); a thrown `SourceError` ends the read.
 */
export function createSource(spec: SourceSpec, deps: SourceDeps): AsyncGenerator<SourceItem> {
  switch (spec.type) {
    case 'csv':
      return readCsvSource(spec, deps);
    case 'ndjson':
      return readNdjsonSource(spec, deps);
    case 'json':
      return readJsonSource(spec, deps);
    case 'http':
      return readHttpSource(spec, deps);
    case 'postgres':
      return readPostgresSource(spec, deps);
    case 'mysql':
      return readMysqlSource(spec, deps);
    case 'worksheet':
      return readWorksheetSource(spec, deps);
  }
}
