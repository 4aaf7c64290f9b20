/** NDJSON sink: appends one JSON object per line (UTF-8, LF). */
import { resolveJobPath } from '../sources/file-input.ts';
import { createFileAppender } from './file-appender.ts';
import { locateSinkFile } from './sink-file.ts';
import type { NdjsonSinkSpec, Sink, SinkDeps } from './sink-spec.ts';

// bigint (pg/mysql big numbers when a caller converts them) has no JSON form: keep digits.
const replacer = (_key: string, value: unknown): unknown =>
  typeof value === 'bigint' ? value.toString() : value;

/** U+2028/U+2029 are valid raw in JSON, but line-oriented readers split on them: escape. */
const toLine = (record: Record<string, unknown>): string =>
  `${JSON.stringify(record, replacer).replaceAll('\u2028', '\\u2028').replaceAll('\u2029', '\\u2029')}\n`;

/** Creates an NDJSON sink appending to `spec.path`. */
export function createNdjsonSink(spec: NdjsonSinkSpec, deps: SinkDeps): Sink {
  const out = createFileAppender(resolveJobPath(spec.path, deps.baseDir), locateSinkFile(spec.path, deps));
  return {
    async write(records) {
      if (records.length === 0) return;
      await out.append(records.map(toLine).join(''));
    },
    close: () => out.close(),
  };
}
